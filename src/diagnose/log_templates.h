// Log templates (issue 16, "Log aggregation"): a job's lines from a few
// minutes before an alert collapsed into templates with counts, so that a
// person sees "RuntimeError: CUDA error: <*> ×3" and "NCCL WARN ... <*> ×120"
// instead of 40,000 lines. Errors and templates that were not printed
// before the window come first (docs/diagnosis.md "Log templates").
//
// The miner is Drain (He et al., "Drain: An Online Log Parsing Approach with
// Fixed Depth Tree", ICWS 2017), as Drain3 runs it online:
//  * variable tokens are masked to <*> first (numbers, hex, UUIDs, IPs,
//    durations, timestamps, paths with digits, key=<number>), by a scanner,
//    not regexes: it runs on every line of the window;
//  * a fixed-depth prefix tree routes a line by its severity and token count,
//    then by its first tokens (a token with digits goes to the <*> child, as
//    does any new token once a node has max_children), to a leaf of a few
//    templates;
//  * the line joins the leaf's most similar template (share of equal tokens
//    >= similarity), whose differing tokens become <*>; else it starts one.
// Severity is part of the route, so an ERROR line never merges into the INFO
// template next to it.
//
// Memory and time are bounded: lines are cut to max_line_bytes and
// max_tokens; a leaf holds at most max_leaf_templates (what a line is
// compared with); the miner keeps at most max_templates templates and
// max_bytes (counted: tokens, examples, tree nodes), evicting the least
// recently matched (an error template gets one second chance). Log text is untrusted: any bytes are
// taken (sanitised as log_excerpt.h's PrintableLine does), nothing throws.
//
// Thread safety: a LogTemplateMiner is not thread-safe (one per diagnosis);
// the free functions are pure, or read a thread-safe LogStore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "diagnose/job_report.h"
#include "store/logs/log_store.h"
#include "wire/log_batch.h"

namespace vigil::diagnose {

enum class TemplateSeverity : uint8_t { kInfo = 0, kWarn = 1, kError = 2 };
const char* TemplateSeverityName(TemplateSeverity severity);  // "info", "warn", "error"

// Whether a line looks like an error: its level (the stored one, else the
// one parse/logs/level.h reads) is error or fatal; or it is not
// trace/debug/info and names a failure (Traceback, XxxError, Exception,
// FATAL, CUDA error, NCCL WARN, Killed, Segmentation fault, out of memory).
// Else warn when its level is warn, else info.
TemplateSeverity GuessSeverity(std::string_view line, wire::LogLevel level);

// Where a template's lines came from (LogTemplate::streams, a bit set).
inline constexpr uint8_t kStreamStdout = 1;
inline constexpr uint8_t kStreamStderr = 2;
inline constexpr uint8_t kStreamOther = 4;  // a log file, or no `stream` label
uint8_t StreamKindOf(const wire::Labels& labels);

// Drain's variable-token masking, one whitespace-separated token: "<*>" for
// a number, duration, timestamp, IP, hex or UUID, a path with digits, a long
// mixed id; "key=<*>" / "key:<*>" when the value is one; surrounding
// brackets, quotes and punctuation are kept ("(12.5s," -> "(<*>,").
// Appends to *out.
void MaskToken(std::string_view token, std::string* out);

struct LogTemplateOptions {
  double similarity = 0.4;    // Drain3's default sim_th
  size_t depth = 4;           // Drain3's: root, token count, depth-3 token layers, leaf (>= 3)
  size_t max_children = 100;  // per tree node
  size_t max_templates = 1000;
  // Templates in one tree leaf: each line is compared with all of them, so
  // this bounds a line's cost when routing fails (many lines of one length
  // whose first tokens are all new). Not in Drain3.
  size_t max_leaf_templates = 64;
  size_t max_bytes = 4u << 20;    // the miner's counted memory (MemoryBytes)
  size_t max_line_bytes = 2048;   // a line is cut there (counted in truncated_lines)
  size_t max_tokens = 128;        // the rest of a longer line becomes one <*>
  size_t max_record_lines = 200;  // physical lines taken from one record
  size_t max_example_bytes = 240;
};

struct LogTemplate {
  uint64_t id = 0;              // stable within a miner's run
  std::string text;             // tokens joined by one space
  uint64_t count = 0;           // lines in the window
  uint64_t baseline_count = 0;  // lines before it
  // The window's first and last line (unix ms) and its first line as
  // printable text; the baseline's when the template has no window line.
  int64_t first_ms = 0;
  int64_t last_ms = 0;
  std::string example;
  uint8_t streams = 0;  // kStream* bits
  TemplateSeverity severity = TemplateSeverity::kInfo;
  bool is_new = false;  // no baseline line matched it
};

struct LogTemplateTotals {
  uint64_t lines = 0;  // physical lines offered, baseline and window
  uint64_t baseline_lines = 0;
  uint64_t window_lines = 0;
  uint64_t blank_lines = 0;      // empty once made printable: not mined
  uint64_t truncated_lines = 0;  // longer than max_line_bytes or max_tokens
  // Not mined: beyond max_record_lines of a record. (Lines LogTemplatesFor
  // did not read show as LogTemplateSummary::read_capped.)
  uint64_t dropped_lines = 0;
  uint64_t templates = 0;          // held now
  uint64_t evicted_templates = 0;  // for the bounds; their lines are lost
  uint64_t evicted_lines = 0;
};

class LogTemplateMiner {
 public:
  explicit LogTemplateMiner(LogTemplateOptions options = {});
  ~LogTemplateMiner();
  LogTemplateMiner(const LogTemplateMiner&) = delete;
  LogTemplateMiner& operator=(const LogTemplateMiner&) = delete;

  // Lines added from now on are the window of interest; those before were
  // the baseline, which decides LogTemplate::is_new.
  void StartWindow();
  bool in_window() const { return in_window_; }

  // One record: physical lines split at '\n', each mined on its own (a
  // traceback's exception line and its frames are different templates).
  // `level` is the record's stored level, its first line's.
  void Add(std::string_view record, int64_t time_ms,
           wire::LogLevel level = wire::LogLevel::kUnknown, uint8_t stream = kStreamOther);

  // Every template held, in id order.
  std::vector<LogTemplate> Templates() const;
  LogTemplateTotals totals() const;
  // Bytes counted for the bound: templates, examples, tree nodes.
  size_t MemoryBytes() const { return bytes_; }
  // Lines left out before they reached the miner (counted as dropped).
  void AddDropped(uint64_t lines);

 private:
  struct Cluster;
  struct Node;
  void AddLine(std::string_view raw, int64_t time_ms, wire::LogLevel level, uint8_t stream);
  void Tokenize(std::string_view line);
  size_t TokenLayers() const;
  Cluster* Match(Node* leaf) const;
  Node* FindLeaf(TemplateSeverity severity) const;
  Node* InsertPath(TemplateSeverity severity);
  Node* Child(Node* node, std::string_view key, bool create);
  Cluster* NewCluster(TemplateSeverity severity);
  void Merge(Cluster* c);
  void Record(Cluster* c, std::string_view line, int64_t time_ms, uint8_t stream);
  void Touch(Cluster* c);
  void Evict();
  Cluster* LeafVictim(const Node& leaf) const;
  void Drop(Cluster* victim, bool prune);
  void Prune(Node* node);
  void Recount(Cluster* c);
  static size_t NodeBytes(const Node& node);

  LogTemplateOptions options_;
  std::unique_ptr<Node> root_;
  std::list<Cluster> lru_;  // most recently matched first
  uint64_t next_id_ = 1;
  uint64_t clock_ = 0;  // counts creations and matches, for LeafVictim
  size_t bytes_ = 0;
  bool in_window_ = false;
  LogTemplateTotals totals_;
  // Per-line scratch, reused: the printable line (when it needed work), the
  // masked line and its tokens' spans.
  std::string printable_;
  std::string masked_;
  std::vector<std::pair<size_t, size_t>> spans_;
  std::vector<std::string_view> tokens_;
  bool capped_ = false;  // the line had more than max_tokens tokens
};

// What an alert shows: the window's templates, errors first, then new ones,
// then by count; at most `max_templates`.
struct LogTemplateSummary {
  std::vector<LogTemplate> templates;
  LogTemplateTotals totals;
  size_t window_templates = 0;  // templates with a window line (before the cut)
  bool read_capped = false;     // LogTemplatesFor: the store held more lines than it read
};
LogTemplateSummary RankTemplates(const LogTemplateMiner& miner, size_t max_templates = 20);

// {"log_templates": [{"template", "count", "first_ms", "last_ms", "example",
// "severity", "new", "baseline_count", "streams"}, ...],
//  "log_template_totals": {...}} (docs/diagnosis.md "Log templates").
nlohmann::json LogTemplatesJson(const LogTemplateSummary& summary);

// A few lines for a notification: "[error] x3 RuntimeError: CUDA error: <*>".
std::vector<std::string> TemplateExcerpt(const LogTemplateSummary& summary, size_t max_lines = 5,
                                         size_t max_line_bytes = 240);

struct LogTemplateWindow {
  int64_t window_before_ms = 5 * 60'000;  // the window: this long before the alert
  // Lines flushed at a crash reach the store a moment after the alert
  // (as JobReporter::LogExcerpt allows).
  int64_t late_ms = 5000;
  int64_t baseline_ms = 15 * 60'000;  // the baseline: this long before the window
  // The newest lines of each are read, at most this many (and bytes of
  // line text held while reading, cut per line to max_line_bytes).
  size_t max_window_lines = 20000;
  size_t max_baseline_lines = 20000;
  size_t max_read_bytes = 8u << 20;
  size_t max_templates = 20;  // ranked
};

// Mines the lines of the streams `matchers` select around an alert at
// `at_ms`: the baseline [at - before - baseline, at - before), then the
// window [at - before, at + late), each read newest first up to its bounds
// and fed oldest first. An error only when the store fails.
Result<LogTemplateSummary> LogTemplatesFor(const logstore::LogStore& store,
                                           const std::vector<logstore::LabelMatcher>& matchers,
                                           int64_t at_ms, const LogTemplateWindow& window = {},
                                           const LogTemplateOptions& options = {});

// The same for a job's lines, selected as JobLogSelector(report) does.
Result<LogTemplateSummary> JobLogTemplates(const logstore::LogStore& store, const JobReport& report,
                                           int64_t at_ms, const LogTemplateWindow& window = {},
                                           const LogTemplateOptions& options = {});

}  // namespace vigil::diagnose
