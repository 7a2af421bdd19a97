#include "collect/metrics/proc_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace vigil::collect::proc {
namespace {

TEST(ProcStatTest, ConvertsTicksToSecondsPerCpu) {
  ProcStat st = ParseProcStat(
      "cpu  3000 20 1000 50000 300 0 50 10 0 0\n"
      "cpu0 1551 10 966 41551 49 0 9 234 7 3\n"
      "intr 123456 10 0\nctxt 987654\nbtime 1700000000\nprocesses 4242\n"
      "procs_running 3\nprocs_blocked 1\n");
  ASSERT_EQ(st.cpus.size(), 1u);
  EXPECT_EQ(st.cpus[0].cpu, "0");
  EXPECT_EQ(st.cpus[0].user, 15.51);
  EXPECT_EQ(st.cpus[0].idle, 415.51);
  EXPECT_EQ(st.cpus[0].steal, 2.34);
  EXPECT_EQ(st.cpus[0].guest, 0.07);
  EXPECT_EQ(st.cpus[0].guest_nice, 0.03);
  EXPECT_EQ(st.interrupts, 123456);
  EXPECT_EQ(st.context_switches, 987654);
  EXPECT_EQ(st.boot_time, 1700000000);
  EXPECT_EQ(st.forks, 4242);
  EXPECT_EQ(st.procs_running, 3);
  EXPECT_EQ(st.procs_blocked, 1);
}

TEST(ProcStatTest, OldKernelColumnsMissingAreZero) {
  ProcStat st = ParseProcStat("cpu0 100 200 300 400\n");
  ASSERT_EQ(st.cpus.size(), 1u);
  EXPECT_EQ(st.cpus[0].system, 3);
  EXPECT_EQ(st.cpus[0].iowait, 0);
  EXPECT_EQ(st.cpus[0].guest_nice, 0);
}

TEST(ProcStatTest, MalformedLinesAreSkipped) {
  ProcStat st = ParseProcStat(
      "cpu0 100 x 300 400\ncpu1 1 2\ncpuZ 1 2 3 4\ncpu2 1 2 3 4\nctxt\nctxt abc\n"
      "processes 18446744073709551616\nprocs_running 2");
  ASSERT_EQ(st.cpus.size(), 1u);
  EXPECT_EQ(st.cpus[0].cpu, "2");
  EXPECT_FALSE(st.context_switches);
  EXPECT_FALSE(st.forks);
  EXPECT_EQ(st.procs_running, 2);  // last line without '\n' still counts
  EXPECT_TRUE(ParseProcStat("").cpus.empty());
}

TEST(MeminfoTest, NodeExporterNamesAndBytes) {
  auto f = ParseMeminfo(
      "MemTotal:       16384000 kB\nActive(anon):     102400 kB\n"
      "HugePages_Total:       4\nHugepagesize:       2048 kB\n");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].name, "MemTotal_bytes");
  EXPECT_EQ(f[0].value, 16384000.0 * 1024);
  EXPECT_EQ(f[1].name, "Active_anon_bytes");
  EXPECT_EQ(f[2].name, "HugePages_Total");
  EXPECT_EQ(f[2].value, 4);
  EXPECT_EQ(f[3].name, "Hugepagesize_bytes");
  EXPECT_EQ(f[3].value, 2048.0 * 1024);
}

TEST(MeminfoTest, MalformedLinesAreSkipped) {
  auto f = ParseMeminfo(
      "MemFree 5 kB\nBad:\nCached: x kB\nToo: many fields here kB\n"
      "Weird(key)/x: 7 kB\nSwapTotal:  2048 kB");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].name, "Weird_key_x_bytes");  // sanitised to a valid metric name
  EXPECT_EQ(f[1].name, "SwapTotal_bytes");
}

TEST(LoadavgTest, ParsesAndRejects) {
  auto l = ParseLoadavg("0.52 1.25 2.00 3/456 7890\n");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->load1, 0.52);
  EXPECT_EQ(l->load5, 1.25);
  EXPECT_EQ(l->load15, 2.0);
  EXPECT_FALSE(ParseLoadavg("0.5 abc"));
  EXPECT_FALSE(ParseLoadavg(""));
}

TEST(DiskstatsTest, KeepsKernelColumnCount) {
  auto d = ParseDiskstats(
      " 259 0 nvme0n1 1000 20 8000 1500 500 10 4000 2500 2 3000 4000 7 1 56 9 11 12\n"
      "   8 0 sda 10 1 16 5 20 2 32 7 0 9 12\n"
      " 8 32 sdc 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].device, "nvme0n1");
  EXPECT_EQ(d[0].major, 259u);
  EXPECT_EQ(d[0].values.size(), 17u);
  EXPECT_EQ(d[0].values[16], 12u);
  EXPECT_EQ(d[1].values.size(), 11u);
  EXPECT_EQ(d[2].values.size(), 17u);  // columns a future kernel adds are ignored
}

TEST(DiskstatsTest, MalformedLinesAreSkipped) {
  auto d = ParseDiskstats(
      "8 0 sda 1 2 3\n8 1 sdb 1 2 3 4 5 6 7 8 9 10 x\n"
      "x 1 sdc 1 2 3 4 5 6 7 8 9 10 11\n");
  EXPECT_TRUE(d.empty());
}

TEST(NetDevTest, ParsesColumns) {
  auto d = ParseNetDev(
      "Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n"
      "  eth0: 80780861    1592    1    2    3     4          5         6    72412     938    7"
      "    8    9    10      11         12\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].device, "eth0");
  EXPECT_EQ(d[0].receive[0], 80780861u);
  EXPECT_EQ(d[0].receive[7], 6u);
  EXPECT_EQ(d[0].transmit[5], 10u);  // colls
  EXPECT_EQ(d[0].transmit[7], 12u);
}

TEST(NetDevTest, MalformedLinesAreSkipped) {
  auto d = ParseNetDev(
      " eth0: 1 2 3\n eth1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
      ": 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
      "eth2:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].device, "eth2");  // no space after the colon on long names
  EXPECT_EQ(d[0].transmit[7], 16u);
}

TEST(MountsTest, UnescapesAndReadsReadOnly) {
  auto m = ParseMounts(
      "/dev/sdb1 /data\\040set xfs ro,relatime 0 0\n"
      "/dev/sda1 / ext4 rw,errors=remount-ro 0 0\nshort line\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].mount_point, "/data set");
  EXPECT_TRUE(m[0].read_only);
  EXPECT_EQ(m[1].fs_type, "ext4");
  EXPECT_FALSE(m[1].read_only);  // "errors=remount-ro" is not "ro"
}

TEST(MountsTest, UnescapeLeavesBadEscapes) {
  EXPECT_EQ(UnescapeMountField("a\\011b\\134c\\012"), "a\tb\\c\n");
  EXPECT_EQ(UnescapeMountField("/trunc\\04"), "/trunc\\04");
  EXPECT_EQ(UnescapeMountField("/bad\\999"), "/bad\\999");
  EXPECT_EQ(UnescapeMountField("\\"), "\\");
}

TEST(KeyValuesTest, ParsesSignedAndSkipsBad) {
  auto kv = ParseKeyValues("pgfault\npgmajfault 12 13\nnr_x -5\npgpgin 77");
  ASSERT_EQ(kv.size(), 2u);
  EXPECT_EQ(kv[0].first, "nr_x");
  EXPECT_EQ(kv[0].second, -5);
  EXPECT_EQ(kv[1].second, 77);
}

TEST(PressureTest, TotalsInSeconds) {
  auto p = ParsePressure(
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=10076450\n"
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=9592882\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(*p->some_seconds, 10076450.0 / 1000.0 / 1000.0);
  EXPECT_EQ(*p->full_seconds, 9.592882);
  EXPECT_FALSE(ParsePressure("some avg10=0.00 total=abc\n"));
  EXPECT_FALSE(ParsePressure("garbage"));
}

TEST(FileNrTest, ParsesAndRejects) {
  auto f = ParseFileNr("514\t0\t2466177\n");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->allocated, 514);
  EXPECT_EQ(f->maximum, 2466177);
  EXPECT_FALSE(ParseFileNr("1 2\n"));
}

TEST(ParsersTest, ArbitraryBytesNeverCrash) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 7919) % 256);
  for (size_t len = 0; len < junk.size(); len += 97) {
    std::string_view s(junk.data(), len);
    ParseProcStat(s);
    ParseMeminfo(s);
    ParseLoadavg(s);
    ParseDiskstats(s);
    ParseNetDev(s);
    ParseMounts(s);
    ParseKeyValues(s);
    ParsePressure(s);
    ParseFileNr(s);
  }
}

}  // namespace
}  // namespace vigil::collect::proc
