#include "parse/training/inspector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vigil::parse::training {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Inspect(std::string_view text, size_t piece = 0) {
  std::vector<std::string> out;
  Inspector inspector([&out](std::string_view json) { out.emplace_back(json); });
  if (piece == 0) piece = text.size() + 1;
  for (size_t i = 0; i < text.size(); i += piece) inspector.Feed(text.substr(i, piece));
  inspector.Finish();
  return out;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ReadLines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(l);
  }
  return lines;
}

// A readable difference: each expected line missing from the output ("-")
// and each output line not expected ("+"), in line order, like a diff.
std::string Diff(const std::vector<std::string>& want, const std::vector<std::string>& got) {
  // Longest common subsequence; the files are small.
  const size_t n = want.size(), m = got.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] =
          want[i] == got[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::string out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && want[i] == got[j]) {
      ++i, ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out += "  + " + got[j++] + "\n";
    } else {
      out += "  - " + want[i++] + "\n";
    }
  }
  return out;
}

// Every tests/data/training/<dir>/<name>.log against <name>.expected.jsonl,
// written by hand from reading the log.
TEST(InspectorCorpusTest, EveryLogMatchesItsExpectation) {
  int files = 0;
  for (const char* dir : {"failures", "frameworks"}) {
    fs::path root = fs::path(VIGIL_TRAINING_CORPUS) / dir;
    if (!fs::exists(root)) continue;
    std::vector<fs::path> logs;
    for (const auto& e : fs::directory_iterator(root)) {
      if (e.path().extension() == ".log") logs.push_back(e.path());
    }
    std::sort(logs.begin(), logs.end());
    for (const fs::path& log : logs) {
      fs::path expected = log;
      expected.replace_extension(".expected.jsonl");
      SCOPED_TRACE(log.string());
      ASSERT_TRUE(fs::exists(expected)) << "no " << expected << " for " << log;
      const std::string text = ReadFile(log);
      const std::vector<std::string> want = ReadLines(expected);
      const std::vector<std::string> got = Inspect(text);
      EXPECT_TRUE(got == want) << log.filename().string() << " differs from "
                               << expected.filename().string() << " (- expected, + got):\n"
                               << Diff(want, got);
      // Any split of the stream gives the same output.
      EXPECT_EQ(Inspect(text, 7), got) << log.filename().string() << " fed in 7-byte pieces";
      ++files;
    }
  }
  EXPECT_GE(files, 15);
}

// Truncated and corrupted corpus text never crashes nor breaks the line
// order (run under ASan/UBSan in CI).
TEST(InspectorTest, DamagedInputIsHandled) {
  std::string all;
  for (const auto& e : fs::directory_iterator(fs::path(VIGIL_TRAINING_CORPUS) / "failures")) {
    if (e.path().extension() == ".log") all += ReadFile(e.path());
  }
  ASSERT_FALSE(all.empty());
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };
  for (int round = 0; round < 200; ++round) {
    std::string text = all.substr(next() % all.size(), 1 + next() % 4000);
    for (int k = 0; k < 8 && !text.empty(); ++k) {
      text[next() % text.size()] = static_cast<char>(next() >> 8);
    }
    int64_t last = 0;
    Inspector inspector([&last](std::string_view json) {
      int64_t line = std::stoll(std::string(json.substr(9, json.find(',') - 9)));
      EXPECT_GE(line, last);
      last = line;
    });
    inspector.Feed(text);
    inspector.Finish();
  }
}

TEST(InspectorTest, MetricsBeforeEventsAndLineOrderAcrossAHeldTraceback) {
  std::vector<std::string> got = Inspect(
      "Traceback (most recent call last):\n"
      "  File \"t.py\", line 1, in <module>\n"
      "ValueError: bad\n"
      "{'loss': 1.5}\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0],
            R"({"line": 3, "event": "traceback", "exception": "ValueError", "message": "bad", )"
            R"("frame": "t.py:1 in \u003cmodule\u003e"})");
  EXPECT_EQ(got[1], R"({"line": 4, "metric": "loss", "value": 1.5})");
}

TEST(InspectorTest, NanLossOncePerRunOfNonFiniteValues) {
  std::vector<std::string> got =
      Inspect("{'loss': nan}\n{'loss': nan}\n{'loss': 1.0}\n{'loss': inf}\n{'eval_loss': nan}\n");
  std::vector<std::string> events;
  for (const auto& g : got) {
    if (g.find("\"event\"") != std::string::npos) events.push_back(g);
  }
  EXPECT_EQ(events,
            (std::vector<std::string>{
                R"({"line": 1, "event": "nan_loss", "metric": "loss", "value": "nan"})",
                R"({"line": 4, "event": "nan_loss", "metric": "loss", "value": "inf"})",
                R"({"line": 5, "event": "nan_loss", "metric": "eval_loss", "value": "nan"})",
            }));
}

TEST(InspectorTest, CarriageReturnStaysInsideTheLineAndCrlfEndsIt) {
  std::vector<std::string> got = Inspect("a\rb\r\nSegmentation fault (core dumped)\r\n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0],
            R"j({"line": 2, "event": "segfault", "message": "Segmentation fault (core dumped)"})j");
}

TEST(InspectorTest, LastLineWithoutNewlineCounts) {
  std::vector<std::string> got = Inspect("x\nKilled");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], R"({"line": 2, "event": "oom_killed", "message": "Killed"})");
}

TEST(InspectorTest, OverlongLineIsCutAndCountedOnce) {
  std::string text(kMaxLineBytes + 5000, 'x');
  text += "\nKilled\n";
  std::vector<std::string> got = Inspect(text, 64 * 1024);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], R"({"line": 2, "event": "oom_killed", "message": "Killed"})");
}

TEST(InspectorTest, EmptyInput) {
  EXPECT_TRUE(Inspect("").empty());
  Inspector inspector([](std::string_view) {});
  inspector.Feed("\n\n");
  inspector.Finish();
  EXPECT_EQ(inspector.lines(), 2);
}

}  // namespace
}  // namespace vigil::parse::training
