#include "diagnose/log_templates.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/temp_dir.h"
#include "store/logs/log_store_test_util.h"

namespace vigil::diagnose {
namespace {

constexpr int64_t kAt = 1'800'000'000'000;  // the alert, ms
constexpr int64_t kMin = 60'000;

std::string Masked(std::string_view token) {
  std::string out;
  MaskToken(token, &out);
  return out;
}

// The templates' texts, in id order.
std::vector<std::string> Texts(const LogTemplateMiner& m) {
  std::vector<std::string> out;
  for (const LogTemplate& t : m.Templates()) out.push_back(t.text);
  return out;
}

const LogTemplate* Find(const std::vector<LogTemplate>& ts, std::string_view needle) {
  for (const LogTemplate& t : ts) {
    if (t.text.find(needle) != std::string::npos) return &t;
  }
  return nullptr;
}

// A word of letters only (no digit), distinct for each (i, j): masking
// leaves it alone, so lines built of them are all different templates.
std::string Word(size_t i, size_t j) {
  std::string w = "w";
  for (size_t v = i * 7919 + j;; v /= 26) {
    w += static_cast<char>('a' + v % 26);
    if (v < 26) break;
  }
  return w;
}

TEST(LogTemplates, MaskingKeepsWordsAndMasksValues) {
  EXPECT_EQ(Masked("10"), "<*>");
  EXPECT_EQ(Masked("-0.25"), "<*>");
  EXPECT_EQ(Masked("1.234e-05,"), "<*>,");
  EXPECT_EQ(Masked("(12.5s,"), "(<*>,");
  EXPECT_EQ(Masked("[00:12<01:23,"), "[<*>,");
  EXPECT_EQ(Masked("2025-03-14T10:00:00.123Z"), "<*>");
  EXPECT_EQ(Masked("10.0.0.5:29500"), "<*>");
  EXPECT_EQ(Masked("0x7f3a2b"), "<*>");
  EXPECT_EQ(Masked("a3bb189e-8bf9-3888-9912-ace4e6543002"), "<*>");
  EXPECT_EQ(Masked("/mnt/ckpt/run-12/checkpoint-500"), "<*>");
  EXPECT_EQ(Masked("blk_-1608999687919862906"), "<*>");
  EXPECT_EQ(Masked("loss=2.3456,"), "loss=<*>,");
  EXPECT_EQ(Masked("tok/s=12345.6]"), "tok/s=<*>]");
  EXPECT_EQ(Masked("cuda:0"), "cuda:<*>");
  EXPECT_EQ(Masked("tcp://10.0.0.5:29500"), "tcp:<*>");
  EXPECT_EQ(Masked("{'loss':"), "{'loss':");
  EXPECT_EQ(Masked("Receive"), "Receive");
  EXPECT_EQ(Masked("rank3"), "rank3");  // Drain's generalisation handles it
  EXPECT_EQ(Masked("torch.distributed.elastic"), "torch.distributed.elastic");
  EXPECT_EQ(Masked("/usr/bin/python"), "/usr/bin/python");
  EXPECT_EQ(Masked("deadbeef"), "deadbeef");  // a hash needs a digit
  EXPECT_EQ(Masked("<*>"), "<*>");
  EXPECT_EQ(Masked("..."), "...");
  EXPECT_EQ(Masked(std::string(200, 'x')), "<*>");
}

// The example of the Drain paper (He et al. 2017, Fig. 1 / Drain3's README).
TEST(LogTemplates, ClassicDrainExample) {
  LogTemplateMiner m;
  m.Add("Receive from node 4", kAt);
  m.Add("Receive from node 10", kAt + 1);
  m.Add("Send to node 4", kAt + 2);
  m.Add("connected to 10.0.0.1", kAt + 3);
  m.Add("connected to 192.168.0.1", kAt + 4);
  m.Add("Hex number 0xDEADBEAF", kAt + 5);
  m.Add("user davidoh logged in", kAt + 6);
  m.Add("user eranr logged in", kAt + 7);
  EXPECT_EQ(Texts(m),
            (std::vector<std::string>{"Receive from node <*>", "Send to node <*>",
                                      "connected to <*>", "Hex number <*>", "user <*> logged in"}));
  auto ts = m.Templates();
  EXPECT_EQ(ts[0].baseline_count, 2u);
  EXPECT_EQ(ts[0].example, "Receive from node 4");
  EXPECT_EQ(ts[0].first_ms, kAt);
  EXPECT_EQ(ts[0].last_ms, kAt + 1);
  EXPECT_EQ(ts[4].baseline_count, 2u);
}

TEST(LogTemplates, DifferentShapesStayApart) {
  LogTemplateMiner m;
  m.Add("Receive from node 4", kAt);
  m.Add("Receive from node 4 twice", kAt);
  m.Add("Receive block from node", kAt);
  m.Add("Checkpoint saved to disk", kAt);
  EXPECT_EQ(m.totals().templates, 4u);
}

TEST(LogTemplates, TrainingLinesCollapse) {
  LogTemplateMiner m;
  m.StartWindow();
  std::mt19937 rnd(7);
  for (int i = 0; i < 200; ++i) {
    const int pct = i / 2;
    std::string bar = std::string(static_cast<size_t>(pct / 10) * 3, '\0');
    for (size_t k = 0; k < bar.size(); k += 3) bar.replace(k, 3, "\xe2\x96\x88");
    m.Add("\rEpoch 1/3:  " + std::to_string(pct) + "%|" + bar + std::string(10 - pct / 10, ' ') +
              "| " + std::to_string(i * 500) + "/100000 [1:02:0" + std::to_string(i % 10) +
              "<2:03:04,  1." + std::to_string(rnd() % 100) + "s/it, loss=2." +
              std::to_string(rnd() % 1000) + ", lr=1.2e-05]",
          kAt + i, wire::LogLevel::kUnknown, kStreamStderr);
    m.Add("{'loss': 2." + std::to_string(rnd() % 1000) + ", 'grad_norm': 0." +
              std::to_string(rnd() % 1000) + ", 'learning_rate': 4.9e-05, 'epoch': 0." +
              std::to_string(i) + "}",
          kAt + i, wire::LogLevel::kUnknown, kStreamStdout);
    m.Add("node-" + std::to_string(i % 8) + ":" + std::to_string(1000 + i) + ":" +
              std::to_string(2000 + i) + " [" + std::to_string(i % 8) +
              "] NCCL WARN NET/IB : Got completion from peer 10.0.0." + std::to_string(i % 250) +
              "<45678> with error 12, opcode 32767, len 0, vendor err 129 (Recv)",
          kAt + i, wire::LogLevel::kWarn, kStreamStderr);
  }
  auto ts = m.Templates();
  ASSERT_EQ(ts.size(), 3u) << ::testing::PrintToString(Texts(m));
  const LogTemplate* tqdm = Find(ts, "Epoch");
  const LogTemplate* dict = Find(ts, "'loss':");
  const LogTemplate* nccl = Find(ts, "NCCL WARN");
  ASSERT_TRUE(tqdm && dict && nccl);
  EXPECT_EQ(tqdm->count, 200u);
  EXPECT_EQ(tqdm->severity, TemplateSeverity::kInfo);
  EXPECT_EQ(tqdm->streams, kStreamStderr);
  EXPECT_EQ(dict->text, "{'loss': <*>, 'grad_norm': <*>, 'learning_rate': <*>, 'epoch': <*>}");
  EXPECT_EQ(dict->streams, kStreamStdout);
  EXPECT_EQ(nccl->count, 200u);
  EXPECT_EQ(nccl->severity, TemplateSeverity::kError);
  EXPECT_EQ(nccl->text.find("node"), std::string::npos) << nccl->text;  // the host is a <*>
  EXPECT_EQ(nccl->example.substr(0, 14), "node-0:1000:20");
}

// A traceback record (the multiline stage joined it): each physical line is
// mined; the exception and the header are errors, the frames are not.
TEST(LogTemplates, TracebackLines) {
  LogTemplateMiner m;
  m.StartWindow();
  const std::string tb =
      "Traceback (most recent call last):\n"
      "  File \"/home/alice/train.py\", line 88, in <module>\n"
      "    main()\n"
      "  File \"/home/alice/train.py\", line 61, in main\n"
      "    loss.backward()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
      "total capacity of 79.11 GiB of which 1.02 GiB is free.";
  m.Add(tb, kAt, wire::LogLevel::kError, kStreamStderr);
  m.Add("2025-03-14 10:00:00,123 - INFO - __main__ - step 10 done", kAt);
  m.Add("2025-03-14 10:00:01,123 - ERROR - __main__ - step 11 done", kAt);
  m.Add("Killed", kAt);
  auto ts = m.Templates();
  const LogTemplate* header = Find(ts, "Traceback");
  const LogTemplate* oom = Find(ts, "OutOfMemoryError");
  const LogTemplate* frame = Find(ts, "File");
  ASSERT_TRUE(header && oom && frame);
  EXPECT_EQ(header->severity, TemplateSeverity::kError);
  EXPECT_EQ(oom->severity, TemplateSeverity::kError);
  EXPECT_EQ(oom->text,
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <*> GiB. GPU <*> has a "
            "total capacity of <*> GiB of which <*> GiB is free.");
  EXPECT_EQ(frame->severity, TemplateSeverity::kInfo);
  EXPECT_EQ(frame->count, 2u);  // both frames: "File <*>, line <*>, in <*>"
  // The same shape at ERROR and at INFO stays two templates.
  const LogTemplate* info = Find(ts, "INFO");
  const LogTemplate* error = Find(ts, "ERROR");
  ASSERT_TRUE(info && error);
  EXPECT_NE(info->id, error->id);
  EXPECT_EQ(error->severity, TemplateSeverity::kError);
  const LogTemplate* killed = Find(ts, "Killed");
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->severity, TemplateSeverity::kError);
}

TEST(LogTemplates, Severity) {
  using wire::LogLevel;
  EXPECT_EQ(GuessSeverity("RuntimeError: CUDA error: an illegal memory access", LogLevel::kUnknown),
            TemplateSeverity::kError);
  EXPECT_EQ(
      GuessSeverity("[rank3]: torch.distributed.DistBackendError: NCCL error", LogLevel::kUnknown),
      TemplateSeverity::kError);
  EXPECT_EQ(GuessSeverity("Segmentation fault (core dumped)", LogLevel::kUnknown),
            TemplateSeverity::kError);
  EXPECT_EQ(GuessSeverity("anything", LogLevel::kFatal), TemplateSeverity::kError);
  EXPECT_EQ(GuessSeverity("WARNING: something odd", LogLevel::kUnknown), TemplateSeverity::kWarn);
  // A line that says it is informational is believed.
  EXPECT_EQ(GuessSeverity("2025-03-14 10:00:00 - INFO - eval: 0 Errors found", LogLevel::kUnknown),
            TemplateSeverity::kInfo);
  EXPECT_EQ(GuessSeverity("step 10 loss 2.3 mean_squared_error 0.1", LogLevel::kUnknown),
            TemplateSeverity::kInfo);
}

TEST(LogTemplates, NewMeansFirstSeenInTheWindow) {
  LogTemplateMiner m;
  for (int i = 0; i < 50; ++i) {
    m.Add("Loading dataset shard " + std::to_string(i), kAt - 10 * kMin + i);
    m.Add("only before the window " + Word(0, 0), kAt - 10 * kMin + i);
  }
  m.StartWindow();
  EXPECT_TRUE(m.in_window());
  m.Add("Loading dataset shard 77", kAt - kMin);
  m.Add("Loading dataset shard 78", kAt - kMin + 5);
  m.Add("RuntimeError: CUDA error: an illegal memory access was encountered", kAt - 30'000);
  m.Add("saving checkpoint now", kAt - 20'000);
  auto s = RankTemplates(m);
  ASSERT_EQ(s.templates.size(), 3u);  // the baseline-only one is not shown
  EXPECT_EQ(s.window_templates, 3u);
  const LogTemplate* shard = Find(s.templates, "Loading");
  const LogTemplate* err = Find(s.templates, "RuntimeError");
  ASSERT_TRUE(shard && err);
  EXPECT_FALSE(shard->is_new);
  EXPECT_EQ(shard->count, 2u);
  EXPECT_EQ(shard->baseline_count, 50u);
  // Window-scoped: its first and last window lines, the first one's text.
  EXPECT_EQ(shard->first_ms, kAt - kMin);
  EXPECT_EQ(shard->last_ms, kAt - kMin + 5);
  EXPECT_EQ(shard->example, "Loading dataset shard 77");
  EXPECT_TRUE(err->is_new);
  EXPECT_EQ(s.totals.baseline_lines, 100u);
  EXPECT_EQ(s.totals.window_lines, 4u);
  EXPECT_EQ(s.totals.templates, 4u);
}

TEST(LogTemplates, ExampleIsTheOldestLine) {
  LogTemplateMiner m;
  m.StartWindow();
  m.Add("job step 5 finished", kAt);
  m.Add("job step 4 finished", kAt - 1000);
  m.Add("job step 6 finished", kAt + 1000);
  auto ts = m.Templates();
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_EQ(ts[0].example, "job step 4 finished");
  EXPECT_EQ(ts[0].first_ms, kAt - 1000);
  EXPECT_EQ(ts[0].last_ms, kAt + 1000);
}

TEST(LogTemplates, RankingErrorsThenNewThenCount) {
  LogTemplateMiner m;
  m.Add("heartbeat ok from worker", kAt - 10 * kMin);
  m.Add("disk read failed Error on volume", kAt - 10 * kMin);
  m.StartWindow();
  for (int i = 0; i < 100; ++i) m.Add("heartbeat ok from worker", kAt - kMin + i);
  for (int i = 0; i < 5; ++i) m.Add("learning rate warmup finished early", kAt - kMin + i);
  for (int i = 0; i < 2; ++i) m.Add("gradient overflow detected again", kAt - kMin + i);
  m.Add("disk read failed Error on volume", kAt - 1000);
  m.Add("NCCL WARN Call to ibv_create_qp failed", kAt - 500);
  auto s = RankTemplates(m, 4);
  ASSERT_EQ(s.templates.size(), 4u);
  EXPECT_EQ(s.window_templates, 5u);
  EXPECT_EQ(s.templates[0].text, "NCCL WARN Call to ibv_create_qp failed");  // error, new
  EXPECT_EQ(s.templates[1].text, "disk read failed Error on volume");        // error, seen before
  EXPECT_EQ(s.templates[2].text, "learning rate warmup finished early");     // new, 5
  EXPECT_EQ(s.templates[3].text, "gradient overflow detected again");        // new, 2
  auto excerpt = TemplateExcerpt(s, 2);
  ASSERT_EQ(excerpt.size(), 2u);
  EXPECT_EQ(excerpt[0], "[error] x1 new: NCCL WARN Call to ibv_create_qp failed");
}

TEST(LogTemplates, StreamsAndExcerptCuts) {
  EXPECT_EQ(StreamKindOf({{"job", "a"}, {"stream", "stderr"}}), kStreamStderr);
  EXPECT_EQ(StreamKindOf({{"stream", "stdout"}}), kStreamStdout);
  EXPECT_EQ(StreamKindOf({{"source", "/var/log/train.log"}}), kStreamOther);
  LogTemplateMiner m;
  m.StartWindow();
  std::string words;
  for (int i = 0; i < 20; ++i) words += " abc";
  m.Add("Fatal Python error:" + words, kAt);
  auto lines = TemplateExcerpt(RankTemplates(m), 5, 40);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "[error] x1 new: Fatal Python error: a…");
}

TEST(LogTemplates, JsonShape) {
  LogTemplateMiner m;
  m.StartWindow();
  m.Add("Receive from node 4", kAt - 2000, wire::LogLevel::kUnknown, kStreamStdout);
  m.Add("Receive from node 10", kAt - 1000, wire::LogLevel::kUnknown, kStreamStderr);
  nlohmann::json j = LogTemplatesJson(RankTemplates(m));
  ASSERT_TRUE(j["log_templates"].is_array());
  ASSERT_EQ(j["log_templates"].size(), 1u);
  const nlohmann::json& t = j["log_templates"][0];
  EXPECT_EQ(t["template"], "Receive from node <*>");
  EXPECT_EQ(t["count"], 2);
  EXPECT_EQ(t["first_ms"], kAt - 2000);
  EXPECT_EQ(t["last_ms"], kAt - 1000);
  EXPECT_EQ(t["example"], "Receive from node 4");
  EXPECT_EQ(t["severity"], "info");
  EXPECT_EQ(t["new"], true);
  EXPECT_EQ(t["baseline_count"], 0);
  EXPECT_EQ(t["streams"], nlohmann::json::array({"stdout", "stderr"}));
  const nlohmann::json& n = j["log_template_totals"];
  EXPECT_EQ(n["lines"], 2);
  EXPECT_EQ(n["templates"], 1);
  EXPECT_EQ(n["truncated_lines"], 0);
  EXPECT_EQ(n["read_capped"], false);
}

TEST(LogTemplates, BoundedByTemplateCountWithLru) {
  LogTemplateOptions o;
  o.max_templates = 50;
  LogTemplateMiner m(o);
  m.StartWindow();
  m.Add("Traceback (most recent call last):", kAt);  // an error, spared once
  for (size_t i = 0; i < 20000; ++i) {
    m.Add(Word(i, 0) + " " + Word(i, 1) + " " + Word(i, 2) + " " + Word(i, 3), kAt);
    if (i == 49) {
      // The error reached the tail once and was spared.
      EXPECT_NE(Find(m.Templates(), "Traceback"), nullptr);
    }
    ASSERT_LE(m.totals().templates, 50u);
  }
  auto t = m.totals();
  EXPECT_EQ(t.templates, 50u);
  EXPECT_EQ(t.evicted_templates, 20001u - 50u);
  EXPECT_EQ(t.evicted_lines, 20001u - 50u);
  // The newest lines are the ones kept.
  EXPECT_NE(Find(m.Templates(), Word(19999, 0)), nullptr);
  EXPECT_LT(m.MemoryBytes(), 200u * 1024);
}

TEST(LogTemplates, BoundedByBytes) {
  LogTemplateOptions o;
  o.max_bytes = 64 * 1024;
  o.max_templates = 100000;
  LogTemplateMiner m(o);
  size_t peak = 0;
  for (size_t i = 0; i < 20000; ++i) {
    std::string line;
    for (size_t j = 0; j < 12; ++j) line += Word(i, j) + "xxxxxxxxxxxxxxxx ";
    m.Add(line, kAt);
    peak = std::max(peak, m.MemoryBytes());
  }
  EXPECT_LE(peak, o.max_bytes + 8 * 1024);  // one template over while it is added
  EXPECT_GT(m.totals().evicted_templates, 19000u);
  EXPECT_GT(m.totals().templates, 10u);
}

// Evicted templates take their tree branches with them.
TEST(LogTemplates, EvictionPrunesTheTree) {
  LogTemplateOptions o;
  o.max_templates = 10;
  LogTemplateMiner m(o);
  for (size_t i = 0; i < 10; ++i) m.Add(Word(i, 0) + " a b", kAt);
  const size_t after_ten = m.MemoryBytes();
  for (size_t i = 10; i < 5000; ++i) m.Add(Word(i, 0) + " a b", kAt);
  EXPECT_LE(m.MemoryBytes(), after_ten + 1024);
}

TEST(LogTemplates, HostileInput) {
  LogTemplateMiner m;
  m.StartWindow();
  // A 64 KiB line without a space, and one of 32 Ki tokens.
  m.Add(std::string(64 * 1024, 'A'), kAt);
  std::string many;
  for (int i = 0; i < 32 * 1024; ++i) many += "ab ";
  m.Add(many, kAt);
  // 100k tokens in one record's line, as the store may hold it.
  std::string huge;
  for (int i = 0; i < 100'000; ++i) huge += "tok" + std::to_string(i % 10) + " ";
  m.Add(huge, kAt);
  // Binary: every byte value, invalid UTF-8, escapes, NULs.
  std::mt19937 rnd(1);
  for (int k = 0; k < 2000; ++k) {
    std::string bin;
    for (int i = 0; i < 300; ++i) bin += static_cast<char>(rnd() & 0xff);
    m.Add(bin, kAt + k);
  }
  const char kEscapes[] = "\xff\xfe\x00\x1b[31mred\x1b[0m \xc3\x28 ok";
  m.Add(std::string_view(kEscapes, sizeof(kEscapes) - 1), kAt);
  // A record of 100k lines: max_record_lines are mined, the rest dropped.
  std::string lines;
  for (int i = 0; i < 100'000; ++i) lines += "x\n";
  m.Add(lines, kAt);
  m.Add("", kAt);
  m.Add(std::string(5000, '\n'), kAt);
  auto t = m.totals();
  EXPECT_GE(t.truncated_lines, 3u);
  EXPECT_EQ(t.dropped_lines, 100'001u - 200u + 5001u - 200u);
  EXPECT_LE(m.MemoryBytes(), LogTemplateOptions{}.max_bytes);
  for (const LogTemplate& tpl : m.Templates()) {
    EXPECT_LE(tpl.text.size(), 2048u + 3 * 128u);  // the line cut, each token's mask
    EXPECT_LE(tpl.example.size(), 240u);
  }
  // Everything renders as valid JSON (nlohmann throws on invalid UTF-8).
  EXPECT_NO_THROW(LogTemplatesJson(RankTemplates(m, 1000)).dump());
}

TEST(LogTemplates, MaxChildrenSendsNewTokensToTheWildcard) {
  LogTemplateOptions o;
  o.max_children = 3;
  LogTemplateMiner m(o);
  for (size_t i = 0; i < 100; ++i) m.Add(Word(i, 0) + " started on port alpha", kAt);
  // All 100 first words end in one leaf or two: the lines merge there.
  EXPECT_LE(m.totals().templates, 3u);
}

// When routing fails (every first token new, the node full), a leaf keeps at
// most max_leaf_templates: what a line is compared with stays bounded.
TEST(LogTemplates, LeafCapKeepsTheRecentlyMatched) {
  LogTemplateOptions o;
  o.max_children = 2;
  o.max_leaf_templates = 8;
  LogTemplateMiner m(o);
  m.Add("keepalive wa wb wc wd", kAt);  // the first child: a leaf of its own
  m.Add("steady wa wb wc wd", kAt);     // the second child is the <*> branch
  for (size_t i = 0; i < 1000; ++i) {
    m.Add(Word(i, 0) + " " + Word(i, 1) + " " + Word(i, 2) + " " + Word(i, 3) + " " + Word(i, 4),
          kAt);
    if (i % 4 == 0) m.Add("steady wa wb wc wd", kAt);  // matched often: kept
  }
  auto t = m.totals();
  EXPECT_EQ(t.templates, 1u + 8u);
  EXPECT_EQ(t.evicted_templates, 1002u - 9u);
  EXPECT_NE(Find(m.Templates(), "keepalive"), nullptr);
  EXPECT_NE(Find(m.Templates(), "steady"), nullptr);
  EXPECT_NE(Find(m.Templates(), Word(999, 0)), nullptr);
}

// ---------------------------------------------------------------------------
// From the log store

class LogTemplatesStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logstore::Options o;
    o.dir = tmp_.path();
    o.background_maintenance = false;
    o.retention_days = 0;
    auto store = logstore::LogStore::Open(o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void TearDown() override { ASSERT_TRUE(store_->Close().ok()); }

  void Append(const std::string& job, const std::string& stream,
              const std::vector<logstore::testing::Rec>& recs) {
    uint64_t& off = offsets_[job + stream];
    auto s = logstore::testing::MakeStream(
        "file:" + job + stream, {{"job", job}, {"node", "n1"}, {"stream", stream}}, off, recs);
    off = s.end_offset;
    ASSERT_TRUE(store_->Append("n1", logstore::testing::MakeBatch({s})).ok());
  }

  TempDir tmp_;
  std::unique_ptr<logstore::LogStore> store_;
  std::map<std::string, uint64_t> offsets_;
};

TEST_F(LogTemplatesStoreTest, MinesTheWindowAgainstTheBaseline) {
  using logstore::testing::Rec;
  constexpr int64_t kMs = 1'000'000;
  std::vector<Rec> before, window, other;
  for (int i = 0; i < 600; ++i) {  // 10 min before the window, one per second
    before.push_back({(kAt - 15 * kMin + i * 1000) * kMs, wire::LogLevel::kInfo,
                      "step " + std::to_string(i) + " loss 2." + std::to_string(i % 97)});
  }
  for (int i = 0; i < 12000; ++i) {  // the window: more than one query page
    window.push_back({(kAt - 4 * kMin + i * 20) * kMs, wire::LogLevel::kInfo,
                      "step " + std::to_string(600 + i) + " loss 1." + std::to_string(i % 97)});
  }
  window.push_back({(kAt - 1000) * kMs, wire::LogLevel::kError,
                    "RuntimeError: CUDA error: an illegal memory access was encountered"});
  other.push_back({(kAt - 1000) * kMs, wire::LogLevel::kError, "other job's line 1"});
  Append("train", "stdout", before);
  Append("train", "stdout", window);
  Append("other", "stdout", other);
  // Before the baseline and after the window: not read.
  Append("train", "stderr",
         {{(kAt - 30 * kMin) * kMs, wire::LogLevel::kInfo, "too old 1"},
          {(kAt + kMin) * kMs, wire::LogLevel::kInfo, "too late 1"}});

  JobReport report;
  report.node = "n1";
  report.job.name = "train";
  auto r = JobLogTemplates(*store_, report, kAt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const LogTemplateSummary& s = *r;
  EXPECT_EQ(s.totals.baseline_lines, 600u);
  EXPECT_EQ(s.totals.window_lines, 12001u);
  EXPECT_FALSE(s.read_capped);
  ASSERT_EQ(s.templates.size(), 2u);
  EXPECT_EQ(s.templates[0].severity, TemplateSeverity::kError);
  EXPECT_TRUE(s.templates[0].is_new);
  EXPECT_EQ(s.templates[0].streams, kStreamStdout);
  EXPECT_EQ(s.templates[1].text, "step <*> loss <*>");
  EXPECT_FALSE(s.templates[1].is_new);
  EXPECT_EQ(s.templates[1].count, 12000u);
  EXPECT_EQ(s.templates[1].baseline_count, 600u);
  EXPECT_EQ(s.templates[1].first_ms, kAt - 4 * kMin);
  EXPECT_EQ(s.templates[1].example, "step 600 loss 1.0");

  // Bounded reads keep the newest lines, and say they were capped.
  auto capped = [&](size_t window_lines, size_t baseline_lines, size_t read_bytes) {
    LogTemplateWindow w;
    w.max_window_lines = window_lines;
    w.max_baseline_lines = baseline_lines;
    w.max_read_bytes = read_bytes;
    auto c = JobLogTemplates(*store_, report, kAt, w);
    EXPECT_TRUE(c.ok());
    EXPECT_TRUE(c.ok() && c->read_capped);
    return c.ok() ? *c : LogTemplateSummary{};
  };
  LogTemplateSummary c = capped(100, 10, 8u << 20);
  EXPECT_EQ(c.totals.window_lines, 100u);
  EXPECT_EQ(c.totals.baseline_lines, 10u);
  ASSERT_FALSE(c.templates.empty());
  EXPECT_EQ(c.templates[0].severity, TemplateSeverity::kError);  // the newest line is in
  // Bytes: each line's text is held while reading.
  c = capped(20000, 20000, 1000);
  EXPECT_LT(c.totals.window_lines, 100u);
  EXPECT_GT(c.totals.window_lines, 10u);
  // A capped baseline does not cut the window short.
  c = capped(20000, 10, 8u << 20);
  EXPECT_EQ(c.totals.window_lines, 12001u);
}

}  // namespace
}  // namespace vigil::diagnose
