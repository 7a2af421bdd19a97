#include "collect/metrics/system_collector.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "core/env_wrapper.h"

namespace vigil::collect {
namespace {

using wire::Labels;
using wire::MetricType;

std::string TestData(std::string_view rel) {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  std::string base = src != nullptr
                         ? JoinPath(src, "src/collect/metrics")
                         : std::string(__FILE__).substr(0, std::string(__FILE__).rfind('/'));
  return JoinPath(JoinPath(base, "testdata"), rel);
}

// A gate a fake blocks on until the test opens it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    ++entered;
    cv.wait(lock, [&] { return open; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  int Entered() {
    std::lock_guard<std::mutex> lock(mu);
    return entered;
  }
};

// The real files, a fixed wall clock, and reads of one path that hang.
class FakeEnv final : public EnvWrapper {
 public:
  FakeEnv() : EnvWrapper(Env::Default()) {}
  std::string block_suffix;  // set before use
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();

  Result<std::string> ReadFile(const std::string& path, size_t max) override {
    if (!block_suffix.empty() && path.ends_with(block_suffix)) gate->Wait();
    return base()->ReadFile(path, max);
  }
  int64_t NowMillis() override { return 1700000123456; }
};

// One pass, indexed by the series' full label set.
struct Pass {
  Status status;
  wire::MetricBatch batch;
  std::map<std::string, double> values;
  std::map<std::string, wire::MetricFamily> families;

  bool Has(std::string_view name, Labels labels = {}) const {
    return values.count(Key(name, labels));
  }
  double Get(std::string_view name, Labels labels = {}) const {
    auto it = values.find(Key(name, labels));
    EXPECT_NE(it, values.end()) << Key(name, labels);
    return it == values.end() ? -12345 : it->second;
  }
  int Count(std::string_view name) const {
    int n = 0;
    for (const auto& s : batch.series) n += wire::MetricName(s.labels) == name;
    return n;
  }
  static std::string Key(std::string_view name, Labels labels) {
    labels.push_back({std::string(wire::kMetricNameLabel), std::string(name)});
    wire::NormalizeLabels(&labels);
    return wire::LabelsToString(labels);
  }
};

Pass RunPass(SystemCollector* c) {
  wire::MetricBatchBuilder b("node", 1000);
  Pass p;
  p.status = c->Collect(&b);
  p.batch = b.Release();
  for (const auto& s : p.batch.series) {
    EXPECT_EQ(p.values.count(wire::LabelsToString(s.labels)), 0u)
        << "duplicate series " << wire::LabelsToString(s.labels);
    p.values[wire::LabelsToString(s.labels)] = s.samples.at(0).value;
  }
  for (const auto& f : p.batch.families) p.families[f.name] = f;
  return p;
}

Result<FsStats> FakeStatFs(const std::string& mp) {
  if (mp == "/") return FsStats{1000, 400, 300, 100, 50, 4096};
  if (mp == "/data set") return FsStats{10, 5, 5, 8, 4, 512};
  return IoError("statvfs " + mp + ": Stale file handle");
}

SystemCollectorOptions FakeTreeOptions(Env* env) {
  SystemCollectorOptions o;
  o.proc_root = TestData("proc");
  o.sys_root = TestData("sys");
  o.udev_data_root = TestData("udev");
  o.env = env;
  o.statfs = FakeStatFs;
  return o;
}

std::unique_ptr<SystemCollector> MustCreate(SystemCollectorOptions o) {
  auto c = SystemCollector::Create(std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

class SystemCollectorTest : public ::testing::Test {
 protected:
  FakeEnv env_;
};

TEST_F(SystemCollectorTest, CpuAndStat) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.Count("node_cpu_seconds_total"), 16);
  EXPECT_EQ(p.Get("node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "user"}}), 15);
  EXPECT_EQ(p.Get("node_cpu_seconds_total", {{"cpu", "1"}, {"mode", "idle"}}), 250);
  EXPECT_EQ(p.Get("node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "softirq"}}), 0.25);
  EXPECT_EQ(p.Get("node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "steal"}}), 0.05);
  EXPECT_EQ(p.Get("node_cpu_guest_seconds_total", {{"cpu", "0"}, {"mode", "user"}}), 0.07);
  EXPECT_EQ(p.Get("node_cpu_guest_seconds_total", {{"cpu", "0"}, {"mode", "nice"}}), 0.03);
  EXPECT_EQ(p.families["node_cpu_seconds_total"].type, MetricType::kCounter);
  EXPECT_EQ(p.families["node_cpu_seconds_total"].help, "Seconds the CPUs spent in each mode.");
  EXPECT_EQ(p.Get("node_intr_total"), 123456);
  EXPECT_EQ(p.Get("node_context_switches_total"), 987654);
  EXPECT_EQ(p.Get("node_forks_total"), 4242);
  EXPECT_EQ(p.Get("node_boot_time_seconds"), 1700000000);
  EXPECT_EQ(p.families["node_boot_time_seconds"].type, MetricType::kGauge);
  EXPECT_EQ(p.Get("node_procs_running"), 3);
  EXPECT_EQ(p.Get("node_procs_blocked"), 1);
}

TEST_F(SystemCollectorTest, MemoryLoadVmstatPressureFilefd) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  EXPECT_EQ(p.Get("node_memory_MemTotal_bytes"), 16384000.0 * 1024);
  EXPECT_EQ(p.Get("node_memory_Active_anon_bytes"), 102400.0 * 1024);
  EXPECT_EQ(p.Get("node_memory_Inactive_file_bytes"), 1024);
  EXPECT_EQ(p.Get("node_memory_HugePages_Total"), 4);
  EXPECT_EQ(p.Get("node_memory_Hugepagesize_bytes"), 2048.0 * 1024);
  EXPECT_EQ(p.families["node_memory_Active_anon_bytes"].help,
            "Memory information field Active_anon_bytes.");
  EXPECT_EQ(p.Get("node_load1"), 0.52);
  EXPECT_EQ(p.Get("node_load5"), 1.25);
  EXPECT_EQ(p.Get("node_load15"), 2);
  for (const char* f :
       {"pgpgin", "pgpgout", "pswpin", "pswpout", "pgfault", "pgmajfault", "oom_kill"}) {
    EXPECT_TRUE(p.Has(std::string("node_vmstat_") + f)) << f;
    EXPECT_EQ(p.families[std::string("node_vmstat_") + f].type, MetricType::kUnknown);
  }
  EXPECT_EQ(p.Get("node_vmstat_pgmajfault"), 60);
  EXPECT_FALSE(p.Has("node_vmstat_nr_free_pages"));
  EXPECT_FALSE(p.Has("node_vmstat_pgsteal_kswapd"));
  EXPECT_EQ(p.Get("node_pressure_cpu_waiting_seconds_total"), 13.64298);
  EXPECT_FALSE(p.Has("node_pressure_cpu_stalled_seconds_total"));
  EXPECT_EQ(p.Get("node_pressure_io_waiting_seconds_total"), 10076450.0 / 1000.0 / 1000.0);
  EXPECT_EQ(p.Get("node_pressure_io_stalled_seconds_total"), 9.592882);
  EXPECT_EQ(p.Get("node_pressure_memory_waiting_seconds_total"), 2.5);
  EXPECT_EQ(p.Get("node_pressure_memory_stalled_seconds_total"), 1);
  EXPECT_EQ(p.Get("node_filefd_allocated"), 514);
  EXPECT_EQ(p.Get("node_filefd_maximum"), 2466177);
}

TEST_F(SystemCollectorTest, Disks) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  Labels nvme = {{"device", "nvme0n1"}};
  EXPECT_FALSE(p.Has("node_disk_reads_completed_total", {{"device", "loop0"}}));
  EXPECT_FALSE(p.Has("node_disk_reads_completed_total", {{"device", "nvme0n1p1"}}));
  EXPECT_EQ(p.Get("node_disk_reads_completed_total", nvme), 1000);
  EXPECT_EQ(p.Get("node_disk_read_bytes_total", nvme), 8000 * 512);
  EXPECT_EQ(p.Get("node_disk_read_time_seconds_total", nvme), 1.5);
  EXPECT_EQ(p.Get("node_disk_written_bytes_total", nvme), 4000 * 512);
  EXPECT_EQ(p.Get("node_disk_io_now", nvme), 2);
  EXPECT_EQ(p.Get("node_disk_io_time_weighted_seconds_total", nvme), 4);
  EXPECT_EQ(p.Get("node_disk_discarded_sectors_total", nvme), 56);
  EXPECT_EQ(p.Get("node_disk_flush_requests_total", nvme), 11);
  EXPECT_EQ(p.Get("node_disk_flush_requests_time_seconds_total", nvme), 12 * (1.0 / 1000.0));
  EXPECT_EQ(p.families["node_disk_io_now"].type, MetricType::kGauge);
  EXPECT_EQ(p.Get("node_disk_info", {{"device", "nvme0n1"},
                                     {"major", "259"},
                                     {"minor", "0"},
                                     {"path", "pci-0000:01:00.0-nvme-1"},
                                     {"wwn", "eui.0025"},
                                     {"model", "Samsung SSD 980"},
                                     {"serial", "S64"},
                                     {"revision", "1B4QFXO7"}}),
            1);
  // Pre-4.18 kernel line: no discard columns; 4.18 line: discards, no flushes.
  EXPECT_EQ(p.Get("node_disk_io_time_weighted_seconds_total", {{"device", "sda"}}), 0.012);
  EXPECT_FALSE(p.Has("node_disk_discards_completed_total", {{"device", "sda"}}));
  EXPECT_EQ(p.Get("node_disk_discard_time_seconds_total", {{"device", "dm-0"}}), 0.015);
  EXPECT_FALSE(p.Has("node_disk_flush_requests_total", {{"device", "dm-0"}}));
}

TEST_F(SystemCollectorTest, Network) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  Labels eth0 = {{"device", "eth0"}};
  EXPECT_FALSE(p.Has("node_network_receive_bytes_total", {{"device", "lo"}}));
  EXPECT_EQ(p.Get("node_network_receive_bytes_total", eth0), 80780861);
  EXPECT_EQ(p.Get("node_network_receive_frame_total", eth0), 4);
  EXPECT_EQ(p.Get("node_network_receive_multicast_total", eth0), 6);
  EXPECT_EQ(p.Get("node_network_transmit_colls_total", eth0), 10);
  EXPECT_EQ(p.Get("node_network_transmit_carrier_total", eth0), 11);
  EXPECT_EQ(p.Get("node_network_transmit_compressed_total", eth0), 12);
  EXPECT_EQ(p.Get("node_network_receive_nohandler_total", eth0), 13);
  EXPECT_EQ(p.families["node_network_receive_drop_total"].help,
            "Network device statistic receive_drop.");
  EXPECT_EQ(p.Get("node_network_up", eth0), 1);
  EXPECT_EQ(p.Get("node_network_up", {{"device", "lo"}}), 0);
  EXPECT_EQ(p.Get("node_network_up", {{"device", "ib0"}}), 0);
  EXPECT_EQ(p.Get("node_network_mtu_bytes", {{"device", "ib0"}}), 2044);
  EXPECT_EQ(p.Get("node_network_speed_bytes", eth0), 25000.0 * 125000);
  EXPECT_FALSE(p.Has("node_network_speed_bytes", {{"device", "ib0"}}));  // speed -1
  EXPECT_FALSE(p.Has("node_network_up", {{"device", "bonding_masters"}}));
}

TEST_F(SystemCollectorTest, UnameAndTime) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  EXPECT_EQ(p.Get("node_uname_info", {{"sysname", "Linux"},
                                      {"release", "6.1.0-test"},
                                      {"version", "#1 SMP Debian"},
                                      {"nodename", "gpu-node-1"},
                                      {"domainname", "(none)"},
                                      {"machine", "x86_64"}}),
            1);
  EXPECT_EQ(p.Get("node_time_seconds"), 1700000123.456);
  EXPECT_EQ(p.Count("node_time_zone_offset_seconds"), 1);
  for (const char* cs : {"tsc", "hpet", "acpi_pm"}) {
    EXPECT_EQ(p.Get("node_time_clocksource_available_info", {{"clocksource", cs}, {"device", "0"}}),
              1);
  }
  EXPECT_EQ(p.Get("node_time_clocksource_current_info", {{"clocksource", "tsc"}, {"device", "0"}}),
            1);
}

TEST_F(SystemCollectorTest, FilesystemsWithExclusionsAndErrors) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  Labels root = {{"device", "/dev/nvme0n1p1"}, {"fstype", "ext4"}, {"mountpoint", "/"}};
  EXPECT_EQ(p.Get("node_filesystem_size_bytes", root), 1000.0 * 4096);
  EXPECT_EQ(p.Get("node_filesystem_free_bytes", root), 400.0 * 4096);
  EXPECT_EQ(p.Get("node_filesystem_avail_bytes", root), 300.0 * 4096);
  EXPECT_EQ(p.Get("node_filesystem_files", root), 100);
  EXPECT_EQ(p.Get("node_filesystem_files_free", root), 50);
  EXPECT_EQ(p.Get("node_filesystem_readonly", root), 0);
  EXPECT_EQ(p.Get("node_filesystem_device_error", root), 0);
  Labels data = {{"device", "/dev/sdb1"}, {"fstype", "xfs"}, {"mountpoint", "/data set"}};
  EXPECT_EQ(p.Get("node_filesystem_readonly", data), 1);
  Labels nfs = {{"device", "nfs.example:/export"}, {"fstype", "nfs4"}, {"mountpoint", "/nfs"}};
  EXPECT_EQ(p.Get("node_filesystem_device_error", nfs), 1);
  EXPECT_FALSE(p.Has("node_filesystem_size_bytes", nfs));
  // /proc, /dev/shm, overlay and cgroup2 are excluded; "/data set" listed twice.
  EXPECT_EQ(p.Count("node_filesystem_device_error"), 3);
  EXPECT_EQ(p.Get("node_scrape_collector_success", {{"collector", "filesystem"}}), 1);
}

TEST_F(SystemCollectorTest, EverySeriesHasAFamilyAndEverySourceSucceeds) {
  Pass p = RunPass(MustCreate(FakeTreeOptions(&env_)).get());
  for (const auto& s : p.batch.series) {
    EXPECT_EQ(p.families.count(std::string(wire::MetricName(s.labels))), 1u)
        << wire::LabelsToString(s.labels);
  }
  std::set<std::string> collectors;
  for (const char* c : {"cpu", "stat", "meminfo", "loadavg", "diskstats", "netdev", "netclass",
                        "vmstat", "pressure", "filefd", "uname", "time", "filesystem"}) {
    EXPECT_EQ(p.Get("node_scrape_collector_success", {{"collector", c}}), 1) << c;
    EXPECT_TRUE(p.Has("node_scrape_collector_duration_seconds", {{"collector", c}})) << c;
  }
  EXPECT_EQ(p.Count("node_scrape_collector_success"), 13);
  // The batch survives the wire format.
  auto decoded = wire::DecodeMetricBatch(wire::EncodeMetricBatch(p.batch));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->series.size(), p.batch.series.size());
}

TEST_F(SystemCollectorTest, MalformedTreeNeverCrashesAndReportsPerSource) {
  SystemCollectorOptions o;
  o.proc_root = TestData("broken/proc");
  o.sys_root = TestData("broken/no-such-sys");
  o.udev_data_root = "";
  o.env = &env_;
  o.statfs = FakeStatFs;
  Pass p = RunPass(MustCreate(o).get());
  EXPECT_FALSE(p.status.ok());  // the first failing source is reported
  auto ok = [&](const char* c) {
    return p.Get("node_scrape_collector_success", {{"collector", c}});
  };
  EXPECT_EQ(ok("cpu"), 1);  // cpu2 is the one well-formed line
  EXPECT_EQ(p.Count("node_cpu_seconds_total"), 8);
  EXPECT_EQ(ok("stat"), 1);
  EXPECT_EQ(p.Get("node_boot_time_seconds"), 1700000000);
  EXPECT_FALSE(p.Has("node_forks_total"));
  EXPECT_EQ(ok("meminfo"), 1);
  EXPECT_EQ(p.Get("node_memory_SwapTotal_bytes"), 2048.0 * 1024);  // no trailing newline
  EXPECT_EQ(ok("loadavg"), 0);
  EXPECT_FALSE(p.Has("node_load1"));
  EXPECT_EQ(ok("diskstats"), 1);
  EXPECT_EQ(p.Get("node_disk_flush_requests_time_seconds_total", {{"device", "sdc"}}), 0.017);
  EXPECT_EQ(p.Count("node_disk_reads_completed_total"), 1);
  EXPECT_EQ(ok("netdev"), 1);
  EXPECT_EQ(p.Get("node_network_transmit_compressed_total", {{"device", "eth2"}}), 16);
  EXPECT_EQ(p.Count("node_network_receive_bytes_total"), 1);
  EXPECT_EQ(ok("netclass"), 0);
  EXPECT_EQ(ok("vmstat"), 1);
  EXPECT_EQ(p.Get("node_vmstat_pgpgin"), 77);
  EXPECT_EQ(ok("pressure"), 1);
  EXPECT_FALSE(p.Has("node_pressure_cpu_waiting_seconds_total"));
  EXPECT_EQ(ok("filefd"), 0);
  EXPECT_EQ(ok("uname"), 0);
  EXPECT_EQ(ok("filesystem"), 1);
  EXPECT_EQ(p.Count("node_filesystem_device_error"), 2);  // "/ok" and "/trunc\04"
}

TEST_F(SystemCollectorTest, MissingTreeOmitsEverythingButTime) {
  SystemCollectorOptions o;
  o.proc_root = "/nonexistent/proc";
  o.sys_root = "/nonexistent/sys";
  o.env = &env_;
  Pass p = RunPass(MustCreate(o).get());
  EXPECT_FALSE(p.status.ok());
  EXPECT_EQ(p.Get("node_scrape_collector_success", {{"collector", "meminfo"}}), 0);
  EXPECT_EQ(p.Get("node_scrape_collector_success", {{"collector", "filesystem"}}), 0);
  EXPECT_EQ(p.Get("node_scrape_collector_success", {{"collector", "time"}}), 1);
  EXPECT_EQ(p.Count("node_cpu_seconds_total"), 0);
}

TEST_F(SystemCollectorTest, StuckMountIsSkippedUntilItReturns) {
  auto gate = std::make_shared<Gate>();
  auto nfs_calls = std::make_shared<std::atomic<int>>(0);
  SystemCollectorOptions o = FakeTreeOptions(&env_);
  // Generous, so the healthy mounts never overrun on a loaded machine; only
  // the gated call does (it waits for the test, however long that takes).
  o.statfs_timeout = std::chrono::milliseconds(1000);
  o.statfs = [gate, nfs_calls](const std::string& mp) -> Result<FsStats> {
    if (mp != "/nfs") return FakeStatFs(mp);
    if (++*nfs_calls == 1) gate->Wait();  // the first call hangs like a dead server
    return FsStats{7, 7, 7, 7, 7, 1};
  };
  auto c = MustCreate(o);
  Labels nfs = {{"device", "nfs.example:/export"}, {"fstype", "nfs4"}, {"mountpoint", "/nfs"}};
  Labels root = {{"device", "/dev/nvme0n1p1"}, {"fstype", "ext4"}, {"mountpoint", "/"}};
  for (int pass = 0; pass < 3; ++pass) {
    Pass p = RunPass(c.get());
    EXPECT_EQ(p.Get("node_filesystem_device_error", nfs), 1);
    EXPECT_FALSE(p.Has("node_filesystem_size_bytes", nfs));
    EXPECT_EQ(p.Get("node_filesystem_size_bytes", root), 1000.0 * 4096);  // others unaffected
    EXPECT_EQ(*nfs_calls, 1);  // a stuck mount is not asked again
  }
  gate->Open();
  Pass p;
  for (int i = 0; i < 10000 && !p.Has("node_filesystem_size_bytes", nfs); ++i) {
    env_.SleepMillis(1);
    p = RunPass(c.get());
  }
  EXPECT_EQ(p.Get("node_filesystem_device_error", nfs), 0);
  EXPECT_EQ(p.Get("node_filesystem_size_bytes", nfs), 7);
  EXPECT_EQ(*nfs_calls, 2);
}

TEST_F(SystemCollectorTest, StuckProcReadReportsFailureWithoutBlocking) {
  env_.block_suffix = "/meminfo";
  SystemCollectorOptions o = FakeTreeOptions(&env_);
  o.pass_timeout = std::chrono::milliseconds(1000);  // sources before meminfo finish well within
  auto c = MustCreate(o);
  Pass p = RunPass(c.get());
  EXPECT_EQ(p.status.code(), StatusCode::kDeadlineExceeded) << p.status.ToString();
  EXPECT_NE(p.status.message().find("meminfo"), std::string::npos) << p.status.ToString();
  auto ok = [&](const Pass& q, const char* col) {
    return q.Get("node_scrape_collector_success", {{"collector", col}});
  };
  EXPECT_EQ(ok(p, "cpu"), 1);  // sources before the stuck one still report
  EXPECT_EQ(p.Count("node_cpu_seconds_total"), 16);
  EXPECT_EQ(ok(p, "meminfo"), 0);
  EXPECT_EQ(ok(p, "loadavg"), 0);
  EXPECT_EQ(ok(p, "filesystem"), 0);
  Pass again = RunPass(c.get());  // refused at once while the read hangs
  EXPECT_EQ(again.status.code(), StatusCode::kUnavailable);
  EXPECT_NE(again.status.message().find("meminfo"), std::string::npos) << again.status.ToString();
  EXPECT_EQ(ok(again, "cpu"), 0);
  env_.gate->Open();
  Pass later;
  for (int i = 0; i < 10000; ++i) {
    env_.SleepMillis(1);
    later = RunPass(c.get());
    if (later.status.ok()) break;
  }
  EXPECT_TRUE(later.status.ok()) << later.status.ToString();
  EXPECT_EQ(ok(later, "meminfo"), 1);
}

TEST(SystemCollectorCreateTest, RejectsBadRegex) {
  SystemCollectorOptions o;
  o.disk_device_exclude = "(unclosed";
  auto c = SystemCollector::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

TEST(MergeCpuTimesTest, CountersNeverGoBackwardsAndHotplugResets) {
  CpuHistory h;
  proc::CpuTimes t;
  t.cpu = "0";
  t.idle = 100;
  t.iowait = 5;
  MergeCpuTimes({t}, &h);
  t.iowait = 4.99;  // tickless kernels let iowait dip
  t.idle = 101;
  MergeCpuTimes({t}, &h);
  EXPECT_EQ(h["0"].iowait, 5);
  EXPECT_EQ(h["0"].idle, 101);
  t.idle = 10;  // idle 91 s back: the CPU was replugged
  t.iowait = 1;
  MergeCpuTimes({t}, &h);
  EXPECT_EQ(h["0"].idle, 10);
  EXPECT_EQ(h["0"].iowait, 1);
  MergeCpuTimes({}, &h);  // offline CPUs drop out
  EXPECT_TRUE(h.empty());
}

}  // namespace
}  // namespace vigil::collect
