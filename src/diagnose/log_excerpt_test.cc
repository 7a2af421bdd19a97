#include "diagnose/log_excerpt.h"

#include <gtest/gtest.h>

namespace vigil::diagnose {
namespace {

constexpr int64_t kAt = 1'800'000'000'000;  // the alert, ms

logstore::LogEntry Entry(int64_t t_ms, std::string line, uint64_t stream = 1) {
  logstore::LogEntry e;
  e.ref.stream_id = stream;
  e.time_ns = t_ms * 1'000'000;
  e.line = std::move(line);
  return e;
}

std::vector<logstore::LogEntry> TrainingLines(int n, int64_t until_ms) {
  std::vector<logstore::LogEntry> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(Entry(until_ms - (n - i) * 1000, "step " + std::to_string(i) + " loss 2.31"));
  }
  return out;
}

// A crash inside the training loop, as the multiline stage joins it: one
// record.
const char* kOomTraceback =
    "Traceback (most recent call last):\n"
    "  File \"/home/alice/train.py\", line 88, in <module>\n"
    "    main()\n"
    "  File \"/home/alice/train.py\", line 61, in main\n"
    "    loss.backward()\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 522, in backward\n"
    "    torch.autograd.backward(\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.11 GiB of which 1.02 GiB is free.";

TEST(LogExcerpt, AFailureIsQuotedWithTheLinesBeforeIt) {
  auto entries = TrainingLines(20, kAt - 3000);
  entries.push_back(Entry(kAt - 2000, kOomTraceback));
  entries.push_back(Entry(kAt - 1000, "wandb: Waiting for W&B process to finish..."));
  auto lines = SelectExcerpt(entries, kAt);
  ASSERT_FALSE(lines.empty());
  ASSERT_LE(lines.size(), 8u);
  // The exception with the requested size, and the user's frame before it.
  bool exception = false, frame = false;
  for (const std::string& l : lines) {
    exception |= l.find("Tried to allocate 2.00 GiB") != std::string::npos;
    frame |= l.find("loss.backward()") != std::string::npos;
  }
  EXPECT_TRUE(exception);
  EXPECT_TRUE(frame);
  EXPECT_EQ(lines[0].find("step"), std::string::npos) << "the training lines are not the excerpt";
}

TEST(LogExcerpt, WithoutAFailureTheLastLinesAreQuoted) {
  auto entries = TrainingLines(30, kAt);
  entries.push_back(Entry(kAt - 500, "   "));  // blank lines say nothing
  auto lines = SelectExcerpt(entries, kAt);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines.back(), "step 29 loss 2.31");
  EXPECT_EQ(lines.front(), "step 25 loss 2.31");
}

TEST(LogExcerpt, AnOldFailureIsHistoryNotTheCause) {
  std::vector<logstore::LogEntry> entries;
  entries.push_back(Entry(kAt - 3'600'000, kOomTraceback));
  auto later = TrainingLines(10, kAt);
  entries.insert(entries.end(), later.begin(), later.end());
  auto lines = SelectExcerpt(entries, kAt);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines.back(), "step 9 loss 2.31");
}

TEST(LogExcerpt, AFailuresContextComesFromItsOwnStream) {
  std::vector<logstore::LogEntry> entries;
  for (int i = 0; i < 10; ++i) {
    entries.push_back(Entry(kAt - 5000 + i, "rank1 step " + std::to_string(i), /*stream=*/2));
    entries.push_back(Entry(kAt - 5000 + i, "rank0 step " + std::to_string(i), /*stream=*/1));
  }
  entries.push_back(Entry(kAt - 100,
                          "RuntimeError: CUDA error: an illegal memory access was "
                          "encountered",
                          1));
  auto lines = SelectExcerpt(entries, kAt);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("illegal memory access"), std::string::npos);
  for (const std::string& l : lines) EXPECT_EQ(l.find("rank1"), std::string::npos) << l;
}

TEST(LogExcerpt, NoLinesNoExcerpt) { EXPECT_TRUE(SelectExcerpt({}, kAt).empty()); }

TEST(PrintableLine, ControlsEscapesAndProgressUpdatesGo) {
  EXPECT_EQ(PrintableLine("\x1b[31mERROR\x1b[0m boom", 100), "ERROR boom");
  EXPECT_EQ(PrintableLine("\x1b]0;title\a text", 100), " text");
  EXPECT_EQ(PrintableLine(" 10%|#   | 1/10\r 20%|##  | 2/10\r", 100), " 20%|##  | 2/10");
  EXPECT_EQ(PrintableLine("a\tb\x01\x7f c   ", 100), "a b c");
  EXPECT_EQ(PrintableLine("bad \xff\xfe utf8", 100), "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8");
}

TEST(PrintableLine, LongLinesAreCutAtACharacterBoundary) {
  std::string zh;
  for (int i = 0; i < 100; ++i) zh += "损失";  // 3 bytes each
  std::string cut = PrintableLine(zh, 50);
  EXPECT_LE(cut.size(), 50u);
  EXPECT_EQ(cut.substr(cut.size() - 3), "…");
  EXPECT_EQ((cut.size() - 3) % 3, 0u);
}

}  // namespace
}  // namespace vigil::diagnose
