#include "parse/logs/multiline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::parse::logs {
namespace {

// Feeds lines as a file would hold them, one '\n' after each, and collects
// the records; Finish() flushes what is held.
class Feeder {
 public:
  explicit Feeder(MultilineOptions options = {}) : joiner_(options) {}

  void Line(std::string_view line, int64_t now_ms = 0) {
    joiner_.Push(line, offset_, static_cast<int64_t>(offset_) * 10, 0, now_ms, &out_);
    offset_ += line.size() + 1;
  }
  void Lines(std::initializer_list<std::string_view> lines) {
    for (auto l : lines) Line(l);
  }
  std::vector<std::string> Finish() {
    joiner_.FlushAll(&out_);
    return Texts();
  }
  std::vector<std::string> Texts() const {
    std::vector<std::string> t;
    for (const auto& r : out_) t.push_back(r.line);
    return t;
  }

  MultilineJoiner joiner_;
  std::vector<wire::LogRecord> out_;
  uint64_t offset_ = 0;
};

using Texts = std::vector<std::string>;

TEST(MultilineTest, PlainLinesAreNeverHeld) {
  Feeder f;
  f.Line("epoch 1 loss 0.5");
  ASSERT_EQ(f.out_.size(), 1u);
  EXPECT_FALSE(f.joiner_.holding());
  f.Line("  indented but after a normal line");
  f.Line("INFO config:");
  f.Line("  hidden_size: 768");
  EXPECT_EQ(f.Texts(), (Texts{"epoch 1 loss 0.5", "  indented but after a normal line",
                              "INFO config:", "  hidden_size: 768"}));
  EXPECT_EQ(f.out_[1].offset, 17u);
  EXPECT_FALSE(f.joiner_.PendingStartOffset().has_value());
}

TEST(MultilineTest, PythonTraceback) {
  Feeder f;
  f.Lines({"step 10",
           "Traceback (most recent call last):", "  File \"train.py\", line 10, in <module>",
           "    main()", "  File \"train.py\", line 5, in main",
           "    raise ValueError(\"bad shape\")", "ValueError: bad shape", "next line"});
  EXPECT_EQ(f.Finish(),
            (Texts{"step 10",
                   "Traceback (most recent call last):\n  File \"train.py\", line 10, in "
                   "<module>\n    main()\n  File \"train.py\", line 5, in main\n    raise "
                   "ValueError(\"bad shape\")\nValueError: bad shape",
                   "next line"}));
  EXPECT_EQ(f.out_[1].offset, 8u);
  EXPECT_EQ(f.out_[1].time_ns, 80);  // the first line's time
}

TEST(MultilineTest, ChainedTracebacks) {
  Feeder f;
  f.Lines({"Traceback (most recent call last):", "  File \"a.py\", line 1, in f", "KeyError: 'x'",
           "", "During handling of the above exception, another exception occurred:", "",
           "Traceback (most recent call last):", "  File \"a.py\", line 3, in g",
           "RuntimeError: wrapped", "done"});
  Texts t = f.Finish();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0],
            "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: "
            "'x'\n\nDuring handling of the above exception, another exception "
            "occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 3, in "
            "g\nRuntimeError: wrapped");
  EXPECT_EQ(t[1], "done");
}

TEST(MultilineTest, BlankLinesAfterTracebackStayOwnRecords) {
  Feeder f;
  f.Lines({"Traceback (most recent call last):", "  File \"a.py\", line 1, in f", "KeyError: 'x'",
           "", "Epoch 2 starting"});
  EXPECT_EQ(f.Finish(), (Texts{"Traceback (most recent call last):\n  File \"a.py\", line 1, in "
                               "f\nKeyError: 'x'",
                               "", "Epoch 2 starting"}));
  // In offset order.
  EXPECT_LT(f.out_[0].offset, f.out_[1].offset);
  EXPECT_LT(f.out_[1].offset, f.out_[2].offset);
}

TEST(MultilineTest, TracebackCutByAnUnrelatedLine) {
  Feeder f;
  f.Lines({"Traceback (most recent call last):", "  File \"a.py\", line 1, in f",
           "step 5 loss 0.1 from another thread"});
  EXPECT_EQ(f.Finish(), (Texts{"Traceback (most recent call last):\n  File \"a.py\", line 1, in f",
                               "step 5 loss 0.1 from another thread"}));
}

TEST(MultilineTest, LoggerExceptionJoinsItsTraceback) {
  Feeder f;
  f.Lines({"ERROR:root:could not save checkpoint",
           "Traceback (most recent call last):", "  File \"s.py\", line 2, in save",
           "OSError: [Errno 28] No space left on device", "INFO:root:retrying"});
  EXPECT_EQ(f.Finish(), (Texts{"ERROR:root:could not save checkpoint\nTraceback (most recent "
                               "call last):\n  File \"s.py\", line 2, in save\nOSError: [Errno "
                               "28] No space left on device",
                               "INFO:root:retrying"}));
}

TEST(MultilineTest, JavaStackTrace) {
  Feeder f;
  f.Lines({"Exception in thread \"main\" java.lang.IllegalStateException: boom",
           "\tat com.example.App.run(App.java:10)", "\tat com.example.App.main(App.java:3)",
           "Caused by: java.io.IOException: disk", "\tat com.example.Io.read(Io.java:7)",
           "\t... 2 more", "2024-01-01 10:00:00,000 INFO [main] next"});
  Texts t = f.Finish();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0],
            "Exception in thread \"main\" java.lang.IllegalStateException: boom\n\tat "
            "com.example.App.run(App.java:10)\n\tat com.example.App.main(App.java:3)\nCaused by: "
            "java.io.IOException: disk\n\tat com.example.Io.read(Io.java:7)\n\t... 2 more");
}

TEST(MultilineTest, Log4jErrorThenException) {
  Feeder f;
  f.Lines({"2024-01-01 10:00:00,000 ERROR [main] c.e.App - request failed",
           "java.lang.NullPointerException: null", "\tat c.e.App.handle(App.java:42)",
           "2024-01-01 10:00:01,000 INFO [main] c.e.App - ok"});
  Texts t = f.Finish();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0],
            "2024-01-01 10:00:00,000 ERROR [main] c.e.App - request failed\n"
            "java.lang.NullPointerException: null\n\tat c.e.App.handle(App.java:42)");
}

TEST(MultilineTest, GlogContinuation) {
  Feeder f;
  f.Lines({"E1129 10:00:00.123456 1234 file.cc:12] RPC failed:", "    status: UNAVAILABLE",
           "    peer: 10.0.0.2", "I1129 10:00:01.000000 1234 file.cc:20] retrying"});
  EXPECT_EQ(f.Finish(), (Texts{"E1129 10:00:00.123456 1234 file.cc:12] RPC failed:\n    status: "
                               "UNAVAILABLE\n    peer: 10.0.0.2",
                               "I1129 10:00:01.000000 1234 file.cc:20] retrying"}));
}

TEST(MultilineTest, ErrorLineIsNotGluedToANormalLine) {
  Feeder f;
  f.Lines({"ERROR: disk almost full", "epoch 3 loss 0.2", "ERROR one", "ERROR two"});
  EXPECT_EQ(f.Finish(),
            (Texts{"ERROR: disk almost full", "epoch 3 loss 0.2", "ERROR one", "ERROR two"}));
}

TEST(MultilineTest, PythonWarningWithSourceLine) {
  Feeder f;
  f.Lines({"/x/data.py:554: UserWarning: This DataLoader will create 16 workers",
           "  warnings.warn(_create_warning_msg(", "step 1"});
  EXPECT_EQ(f.Finish(), (Texts{"/x/data.py:554: UserWarning: This DataLoader will create 16 "
                               "workers\n  warnings.warn(_create_warning_msg(",
                               "step 1"}));
}

TEST(MultilineTest, NcclErrorBlock) {
  Feeder f;
  f.Lines({"node1:123:456 [0] include/socket.h:403 NCCL WARN Connect to 10.0.0.2<4321> failed",
           "node1:123:456 [0] NCCL INFO transport/net_socket.cc:300 -> 2",
           "node2:99:100 [1] NCCL INFO misc/socket.cc:50 -> 2",
           "node1:123:456 [0] NCCL INFO init.cc:1000 -> 2"});
  Texts t = f.Finish();
  EXPECT_EQ(t, (Texts{"node1:123:456 [0] include/socket.h:403 NCCL WARN Connect to "
                      "10.0.0.2<4321> failed\nnode1:123:456 [0] NCCL INFO "
                      "transport/net_socket.cc:300 -> 2",
                      "node2:99:100 [1] NCCL INFO misc/socket.cc:50 -> 2",
                      "node1:123:456 [0] NCCL INFO init.cc:1000 -> 2"}));
}

TEST(MultilineTest, NcclInfoLinesAreNotJoined) {
  Feeder f;
  f.Lines({"node1:123:456 [0] NCCL INFO Bootstrap : Using eth0",
           "node1:123:456 [0] NCCL INFO NET/Plugin : No plugin found",
           "node1:123:456 [0] NCCL WARN Net : no interface found",
           "node1:123:456 [0] NCCL INFO cudaDriverVersion 12020"});
  EXPECT_EQ(f.Finish().size(), 4u);
}

TEST(MultilineTest, CudaErrorWithHints) {
  Feeder f;
  f.Lines({"[rank0]: Traceback (most recent call last):",
           "[rank0]:   File \"/app/train.py\", line 88, in <module>", "[rank1]: step 7",
           "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered"});
  f.Lines({"RuntimeError: CUDA error: device-side assert triggered",
           "CUDA kernel errors might be asynchronously reported at some other API call, so the "
           "stacktrace below might be incorrect.",
           "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", "", "step 8"});
  Texts t = f.Finish();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0],
            "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"/app/train.py\", line "
            "88, in <module>");
  EXPECT_EQ(t[1], "[rank1]: step 7");
  EXPECT_EQ(t[3],
            "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be "
            "asynchronously reported at some other API call, so the stacktrace below might be "
            "incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nCompile with "
            "`TORCH_USE_CUDA_DSA` to enable device-side assertions.");
  EXPECT_EQ(t[4], "");
  EXPECT_EQ(t[5], "step 8");
}

TEST(MultilineTest, WorkerPrefixedTraceback) {
  Feeder f;
  f.Lines({"[rank0]: Traceback (most recent call last):",
           "[rank0]:   File \"/app/train.py\", line 88, in <module>",
           "[rank0]:     loss.backward()", "[rank0]: torch.OutOfMemoryError: CUDA out of memory.",
           "[rank0]: step 9"});
  Texts t = f.Finish();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1], "[rank0]: step 9");
}

TEST(MultilineTest, FlushAfterTimeout) {
  Feeder f({.flush_timeout_ms = 1000});
  f.Line("some output", 0);
  f.Line("Traceback (most recent call last):", 100);
  f.Line("  File \"a.py\", line 1, in f", 200);
  f.Line("ZeroDivisionError: division by zero", 300);
  EXPECT_EQ(f.out_.size(), 1u);
  EXPECT_EQ(f.joiner_.PendingStartOffset(), 12u);
  f.joiner_.Flush(1299, &f.out_);
  EXPECT_EQ(f.out_.size(), 1u);
  f.joiner_.Flush(1300, &f.out_);
  ASSERT_EQ(f.out_.size(), 2u);
  EXPECT_EQ(f.out_[1].offset, 12u);
  EXPECT_FALSE(f.joiner_.PendingStartOffset().has_value());
}

TEST(MultilineTest, FlagsAreMerged) {
  MultilineJoiner j;
  std::vector<wire::LogRecord> out;
  j.Push("Traceback (most recent call last):", 0, 1, 0, 0, &out);
  j.Push("  File \"\xEF\xBF\xBD.py\"", 35, 2, wire::kLogFlagInvalidUtf8, 0, &out);
  j.FlushAll(&out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, wire::kLogFlagInvalidUtf8);
  EXPECT_EQ(out[0].time_ns, 1);
}

TEST(MultilineTest, BoundedByLines) {
  Feeder f({.max_lines = 3});
  f.Lines({"Traceback (most recent call last):", "  a", "  b", "  c", "  d", "  e", "  f", "X: y"});
  EXPECT_EQ(f.Finish(),
            (Texts{"Traceback (most recent call last):\n  a\n  b", "  c\n  d\n  e", "  f\nX: y"}));
  EXPECT_EQ(f.out_[1].offset, 43u);
}

TEST(MultilineTest, BoundedByBytes) {
  Feeder f({.max_bytes = 50});
  f.Lines({"Traceback (most recent call last):", "  File one.py", "  File two.py"});
  Texts t = f.Finish();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], "Traceback (most recent call last):\n  File one.py");
  EXPECT_EQ(t[1], "  File two.py");
}

TEST(MultilineTest, RecordsCarryTheirFirstLinesLevel) {
  Feeder f({.max_lines = 2});
  f.Lines({"INFO:root:start", "plain print", "ERROR:root:save failed",
           "Traceback (most recent call last):", "  File \"a.py\"", "OSError: disk full",
           "node1:1:2 [0] a.cc:1 NCCL WARN x", "node1:1:2 [0] NCCL INFO b.cc:2 -> 2"});
  f.Finish();
  std::vector<wire::LogLevel> levels;
  for (const auto& r : f.out_) levels.push_back(r.level);
  using L = wire::LogLevel;
  // The error block is split by max_lines; every piece keeps its level.
  EXPECT_EQ(levels, (std::vector<L>{L::kInfo, L::kUnknown, L::kError, L::kError, L::kWarn}));
  EXPECT_EQ(f.out_[3].line, "  File \"a.py\"\nOSError: disk full");
}

TEST(MultilineTest, Disabled) {
  Feeder f({.enabled = false});
  f.Lines({"Traceback (most recent call last):", "  File \"a.py\""});
  EXPECT_EQ(f.out_.size(), 2u);
  EXPECT_FALSE(f.joiner_.holding());
}

// A caller may hand over each line's own string (Push's `owner`): the
// records are the same as when the joiner copies, whether the line is
// emitted at once, starts a held block, is a tentative blank line, or is
// joined; a line that is only a head of its owner is cut to the line.
TEST(MultilineTest, TakingTheLinesBufferChangesNoRecord) {
  const std::vector<std::string> lines = {
      "step 10 with a line long enough to live on the heap",
      "Traceback (most recent call last):",
      "  File \"train.py\", line 10, in <module>",
      "ValueError: bad shape",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "RuntimeError: x",
      "",
      "after the block, also long enough for the heap\r",
      "short"};
  for (bool enabled : {true, false}) {
    MultilineOptions o;
    o.enabled = enabled;
    MultilineJoiner copying(o), taking(o);
    std::vector<wire::LogRecord> copied, taken;
    uint64_t offset = 0;
    for (const std::string& l : lines) {
      std::string owner = l;
      std::string_view line = owner;
      if (line.ends_with('\r')) line.remove_suffix(1);
      copying.Push(line, offset, 0, 0, 0, &copied);
      taking.Push(line, offset, 0, 0, 0, &taken, &owner);
      offset += l.size() + 1;
    }
    copying.FlushAll(&copied);
    taking.FlushAll(&taken);
    EXPECT_EQ(taken, copied) << "enabled " << enabled;
  }
}

}  // namespace
}  // namespace vigil::parse::logs
