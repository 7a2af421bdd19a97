#include "parse/logs/level.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace vigil::parse::logs {
namespace {

using wire::LogLevel;

struct Case {
  const char* line;
  LogLevel level;
};

void ExpectAll(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(static_cast<int>(DetectLevel(c.line)), static_cast<int>(c.level)) << c.line;
  }
}

TEST(LevelTest, PythonLogging) {
  ExpectAll({
      {"2024-01-01 10:00:00,123 - trainer - WARNING - lr is very high", LogLevel::kWarn},
      {"2024-01-01 10:00:00,123 - __main__ - INFO - no errors found in dataset", LogLevel::kInfo},
      {"2024-01-01 10:00:00,123 - root - ERROR - failed to load checkpoint", LogLevel::kError},
      {"2024-01-01 10:00:00,123 - root - CRITICAL - out of disk", LogLevel::kFatal},
      {"2024-01-01 10:00:00,123 - root - DEBUG - batch shapes", LogLevel::kDebug},
      {"WARNING:root:this is deprecated", LogLevel::kWarn},
      {"INFO:__main__:starting epoch 3", LogLevel::kInfo},
      {"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)",
       LogLevel::kError},
      {"[2024-01-01 10:00:00,123] ERROR something broke", LogLevel::kError},
      {"[2024-01-01 10:00:00,123 ERROR] something broke", LogLevel::kError},
      {"[2024-01-01 10:00:00,123] [INFO] [real_accelerator.py:161:get_accelerator] Setting",
       LogLevel::kInfo},
      {"Traceback (most recent call last):\n  File \"x.py\", line 1", LogLevel::kError},
      {"[rank0]: Traceback (most recent call last):", LogLevel::kError},
      {"ValueError: bad shape", LogLevel::kError},
      {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
       LogLevel::kError},
      {"RuntimeError: CUDA error: device-side assert triggered", LogLevel::kError},
      {"KeyboardInterrupt", LogLevel::kError},
      {"/opt/venv/lib/python3.10/site-packages/torch/utils/data.py:554: UserWarning: This "
       "DataLoader will create 16 worker processes",
       LogLevel::kWarn},
      {"  warnings.warn(", LogLevel::kUnknown},
  });
}

TEST(LevelTest, GlogAndAbsl) {
  ExpectAll({
      {"E1129 10:00:00.123456 1234 file.cc:12] connection reset", LogLevel::kError},
      {"W1129 10:00:00.123456 1234 file.cc:12] slow", LogLevel::kWarn},
      {"I0101 00:00:00.000001    77 main.cc:5] started", LogLevel::kInfo},
      {"F1129 10:00:00.123456 1234 file.cc:12] Check failed: x", LogLevel::kFatal},
      {"E1234", LogLevel::kUnknown},
  });
}

TEST(LevelTest, JavaLog4jAndJul) {
  ExpectAll({
      {"2024-01-01 10:00:00,123 ERROR [main] com.example.App - request failed", LogLevel::kError},
      {"2024-01-01 10:00:00.123  WARN 1234 --- [nio-8080-exec-1] o.s.web : slow", LogLevel::kWarn},
      {"10:00:00.123 [main] INFO  org.apache.spark.SparkContext - Running Spark", LogLevel::kInfo},
      {"SEVERE: Servlet.service() threw exception", LogLevel::kError},
      {"Exception in thread \"main\" java.lang.IllegalStateException: boom", LogLevel::kError},
      {"java.lang.NullPointerException: null", LogLevel::kError},
  });
}

TEST(LevelTest, GoAndRust) {
  ExpectAll({
      {R"({"level":"warn","ts":1704067200.1,"caller":"x/y.go:12","msg":"retrying"})",
       LogLevel::kWarn},
      {R"({"level":"error","msg":"dial failed","time":"2024-01-01T10:00:00Z"})", LogLevel::kError},
      {R"({"msg":"ok","severity":"ERROR"})", LogLevel::kError},
      {R"({"levelname": "WARNING", "message": "x"})", LogLevel::kWarn},
      {R"({"level":30,"time":1,"msg":"pino"})", LogLevel::kInfo},
      {R"({"level":50,"msg":"pino"})", LogLevel::kError},
      {R"({"msg":"no level here","error":"x"})", LogLevel::kUnknown},
      {"time=\"2024-01-01T10:00:00Z\" level=warning msg=\"disk almost full\"", LogLevel::kWarn},
      {"ts=2024-01-01T10:00:00Z lvl=error msg=x", LogLevel::kError},
      {"2024-01-01T10:00:00.000Z\tINFO\tserver/main.go:42\tlistening", LogLevel::kInfo},
      {"2024-01-01T10:00:00.123456Z  WARN my_crate::sync: lagging behind", LogLevel::kWarn},
      {"2024-01-01T10:00:00.123456Z ERROR tokio_runtime: worker panicked", LogLevel::kError},
      {"\x1b[2m2024-01-01T10:00:00Z\x1b[0m \x1b[33m WARN\x1b[0m crate: colored", LogLevel::kWarn},
      {"panic: runtime error: index out of range [5] with length 3", LogLevel::kFatal},
      {"Error: No such file or directory (os error 2)", LogLevel::kError},
      {"error: could not compile `foo`", LogLevel::kError},
      {"warning: unused variable: `x`", LogLevel::kWarn},
      {"fatal: not a git repository", LogLevel::kFatal},
  });
}

TEST(LevelTest, MlFrameworks) {
  ExpectAll({
      {"[WARNING|trainer.py:123] 2024-01-01 10:00:00,000 >> No label_names provided",
       LogLevel::kWarn},
      {"[INFO|configuration_utils.py:733] 2024-01-01 >> loading configuration file",
       LogLevel::kInfo},
      {"node1:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", LogLevel::kInfo},
      {"node1:1234:5678 [0] misc/socket.cc:50 NCCL WARN Net : Connection refused", LogLevel::kWarn},
      {"NCCL_DEBUG=INFO is set", LogLevel::kUnknown},
      {"[W socket.cpp:663] [c10d] The client socket has failed to connect", LogLevel::kWarn},
      {"[E1129 10:00:00.123456 77 ProcessGroupNCCL.cpp:1] Watchdog caught", LogLevel::kError},
      {"<error> something", LogLevel::kError},
      {"[warn] low memory", LogLevel::kWarn},
      {"(Debug) details", LogLevel::kDebug},
  });
}

TEST(LevelTest, KeywordsLaterInTheLineDoNotCount) {
  ExpectAll({
      {"epoch 1: error rate 0.12, loss 0.5", LogLevel::kUnknown},
      {"Epoch 1 Error: 0.1", LogLevel::kUnknown},
      {"step 100 no errors found", LogLevel::kUnknown},
      {"{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 0.1}", LogLevel::kUnknown},
      {"100%|██████████| 500/500 [01:00<00:00,  8.33it/s]", LogLevel::kUnknown},
      {"", LogLevel::kUnknown},
      {"   ", LogLevel::kUnknown},
      {"ERRORS_TOTAL=3", LogLevel::kUnknown},
      {"file /var/log/ERROR.txt", LogLevel::kUnknown},
  });
  std::string long_prefix(200, 'x');
  EXPECT_EQ(DetectLevel(long_prefix + " ERROR late"), LogLevel::kUnknown);
}

// The scan finds words by bit masks over the head: a level word counts at
// any position up to the head's end, across the masks' 16- and 64-byte
// edges, and a word cut by the end is judged by what is left of it.
TEST(LevelTest, LevelWordAtEveryPositionOfTheHead) {
  for (size_t at = 2; at + 5 <= kLevelScanBytes; ++at) {
    std::string line = "0" + std::string(at - 1, ' ') + "ERROR " + std::string(200, 'z');
    EXPECT_EQ(DetectLevel(line), LogLevel::kError) << "at " << at;
    line = "0" + std::string(at - 1, '_') + " WARN";  // "0___" is one word
    EXPECT_EQ(DetectLevel(line), LogLevel::kWarn) << "at " << at;
  }
  std::string head(kLevelScanBytes - 4, ' ');
  EXPECT_EQ(DetectLevel("0" + head + "ERRORS"), LogLevel::kError);  // cut to "ERR"
  EXPECT_EQ(DetectLevel("0" + head + "X ERROR"), LogLevel::kUnknown);
}

TEST(LevelTest, OnlyFirstLineOfARecordCounts) {
  EXPECT_EQ(DetectLevel("step 5 ok\nERROR later line"), LogLevel::kUnknown);
  EXPECT_EQ(DetectLevel("ERROR:root:failed\nTraceback (most recent call last):"), LogLevel::kError);
}

TEST(LevelTest, WorkerPrefixes) {
  EXPECT_EQ(WorkerPrefixLen("[rank0]: Traceback"), 9u);
  // Ray's prefixes keep the line's own indentation.
  EXPECT_EQ(WorkerPrefixLen("(TrainTrainable pid=600, ip=10.0.0.196)   File \"a.py\""), 40u);
  EXPECT_EQ(WorkerPrefixLen("(pid=600) step 1"), 10u);
  EXPECT_EQ(WorkerPrefixLen("(RayTrainWorker pid=12) x"), 24u);
  EXPECT_EQ(WorkerPrefixLen("(see above) pid=3"), 0u);
  EXPECT_EQ(WorkerPrefixLen("(pid=) x"), 0u);
  EXPECT_EQ(WorkerPrefixLen("(pid=12)x"), 0u);
}

TEST(LevelTest, LevelFromWord) {
  LogLevel l;
  ASSERT_TRUE(LevelFromWord("Warning", &l));
  EXPECT_EQ(l, LogLevel::kWarn);
  ASSERT_TRUE(LevelFromWord("CRIT", &l));
  EXPECT_EQ(l, LogLevel::kFatal);
  EXPECT_FALSE(LevelFromWord("loss", &l));
  EXPECT_FALSE(LevelFromWord("errors", &l));
}

}  // namespace
}  // namespace vigil::parse::logs
