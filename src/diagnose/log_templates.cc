#include "diagnose/log_templates.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <functional>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/strings.h"
#include "diagnose/log_excerpt.h"
#include "parse/logs/level.h"

namespace vigil::diagnose {
namespace {

constexpr std::string_view kWild = "<*>";
constexpr int64_t kNsPerMs = 1'000'000;
// Failure words are looked for this far into a line: a long line's tail is
// its payload (a tensor, a config dump), not its kind.
constexpr size_t kSeverityScanBytes = 512;
// A longer token is an opaque blob (base64, a serialized tensor): a value.
constexpr size_t kMaxLiteralToken = 96;
// What a hash-map entry costs beyond its key and value (node link, cached
// hash, bucket slot), for the counted bytes.
constexpr size_t kMapEntryBytes = 32;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsOpen(char c) {
  switch (c) {
    case '(':
    case '[':
    case '{':
    case '<':
    case '\'':
    case '"':
    case '`':
      return true;
    default:
      return false;
  }
}
bool IsClose(char c) {
  switch (c) {
    case ')':
    case ']':
    case '}':
    case '>':
    case ',':
    case ';':
    case ':':
    case '.':
    case '\'':
    case '"':
    case '`':
    case '!':
    case '?':
      return true;
    default:
      return false;
  }
}

// Numbers, sizes, durations ("12.5s", "1:02:03"), timestamps, IPs, ratios:
// whatever starts with a digit.
bool StartsNumeric(std::string_view s) {
  if (s.empty()) return false;
  if (IsDigit(s[0])) return true;
  return (s[0] == '-' || s[0] == '+' || s[0] == '.') && s.size() > 1 && IsDigit(s[1]);
}

// Whether a token's core (without brackets and punctuation) is a value
// rather than a word: what Drain's pre-masking regexes find, by one scan.
bool IsVariable(std::string_view s) {
  if (s.empty()) return false;
  if (s.size() > kMaxLiteralToken || StartsNumeric(s)) return true;
  size_t digits = 0, hex = 0, slashes = 0;
  for (char c : s) {
    digits += IsDigit(c);
    hex += IsHex(c) || c == '-';
    slashes += c == '/';
  }
  if (digits == 0) return false;
  if (slashes > 0) return true;                       // a path with digits in it
  if (s.size() >= 7 && hex == s.size()) return true;  // hashes, UUIDs (0x... starts with a digit)
  // Long mixed ids (blk_-1608999687919862906, run20250314): mostly digits.
  return digits >= 4 && digits * 3 >= s.size();
}

size_t HeapBytes(const std::string& s) {
  // libstdc++ keeps up to 15 bytes inside the object.
  return s.capacity() > 15 ? s.capacity() + 1 : 0;
}

bool HasDigit(std::string_view s) { return std::any_of(s.begin(), s.end(), IsDigit); }

// What a terminal shows of a line that carries '\r' updates (a progress
// bar): the text after its last '\r', or before a final one.
std::string_view LastUpdate(std::string_view line) {
  size_t cr = line.rfind('\r');
  if (cr == std::string_view::npos) return line;
  if (cr + 1 < line.size()) return line.substr(cr + 1);
  std::string_view head = line.substr(0, cr);
  size_t prev = head.rfind('\r');
  return prev == std::string_view::npos ? head : head.substr(prev + 1);
}

// Calls fn(line, n) for the first `max` physical lines of `record` (n from
// 0); returns how many more it holds.
template <typename Fn>
uint64_t ForEachLine(std::string_view record, size_t max, Fn fn) {
  size_t start = 0;
  for (size_t n = 0;; ++n) {
    if (n == max) {
      return 1 + static_cast<uint64_t>(std::count(record.begin() + static_cast<ptrdiff_t>(start),
                                                  record.end(), '\n'));
    }
    const size_t nl = record.find('\n', start);
    fn(record.substr(start, nl == std::string_view::npos ? nl : nl - start), n);
    if (nl == std::string_view::npos) return 0;
    start = nl + 1;
  }
}

constexpr std::string_view kFailureWords[] = {"Traceback (most recent call last)",
                                              "Error",
                                              "Exception",
                                              "FATAL",
                                              "Fatal",
                                              "CUDA error",
                                              "NCCL WARN",
                                              "Killed",
                                              "Segmentation fault",
                                              "core dumped",
                                              "out of memory",
                                              "Aborted",
                                              "ERROR",
                                              "CRITICAL",
                                              "panic:"};

// For each byte, the failure words that begin with it (a bit each): one
// pass over the line instead of one search per word.
constexpr std::array<uint16_t, 256> kFailureFirstBytes = [] {
  std::array<uint16_t, 256> t{};
  for (size_t w = 0; w < std::size(kFailureWords); ++w) {
    t[static_cast<unsigned char>(kFailureWords[w][0])] |= static_cast<uint16_t>(1u << w);
  }
  return t;
}();

bool NamesFailure(std::string_view line) {
  line = line.substr(0, std::min(line.size(), kSeverityScanBytes));
  for (size_t i = 0; i < line.size(); ++i) {
    for (uint16_t m = kFailureFirstBytes[static_cast<unsigned char>(line[i])]; m != 0; m &= m - 1) {
      if (line.substr(i).starts_with(kFailureWords[std::countr_zero(m)])) return true;
    }
  }
  return false;
}

// A line PrintableLine would return unchanged: printable ASCII, no
// trailing space, within the bound. Most lines are; they skip its copies.
bool AlreadyPrintable(std::string_view s, size_t max_bytes) {
  if (s.size() > max_bytes || s.empty() || s.back() == ' ') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace

const char* TemplateSeverityName(TemplateSeverity severity) {
  switch (severity) {
    case TemplateSeverity::kError:
      return "error";
    case TemplateSeverity::kWarn:
      return "warn";
    case TemplateSeverity::kInfo:
      break;
  }
  return "info";
}

TemplateSeverity GuessSeverity(std::string_view line, wire::LogLevel level) {
  const wire::LogLevel lv = std::max(level, parse::logs::DetectLevel(line));
  if (lv >= wire::LogLevel::kError) return TemplateSeverity::kError;
  // A line that says it is informational is believed: "INFO ... 0 errors".
  if (lv != wire::LogLevel::kUnknown && lv <= wire::LogLevel::kInfo) return TemplateSeverity::kInfo;
  if (NamesFailure(line)) return TemplateSeverity::kError;
  return lv == wire::LogLevel::kWarn ? TemplateSeverity::kWarn : TemplateSeverity::kInfo;
}

uint8_t StreamKindOf(const wire::Labels& labels) {
  for (const wire::Label& l : labels) {
    if (l.name != "stream") continue;
    if (l.value == "stdout") return kStreamStdout;
    if (l.value == "stderr") return kStreamStderr;
  }
  return kStreamOther;
}

void MaskToken(std::string_view token, std::string* out) {
  size_t b = 0, e = token.size();
  while (b < e && IsOpen(token[b])) ++b;
  while (e > b && IsClose(token[e - 1])) --e;
  const std::string_view core = token.substr(b, e - b);
  const std::string_view prefix = token.substr(0, b), suffix = token.substr(e);
  if (StartsNumeric(core)) {
    out->append(prefix).append(kWild).append(suffix);
    return;
  }
  // key=value, key:value (loss=2.31, cuda:0, tcp://10.0.0.5:29500): the key
  // stays, whatever the digits in the whole.
  size_t eq = std::string_view::npos, colon = std::string_view::npos;
  for (size_t i = 0; i < core.size() && eq == std::string_view::npos; ++i) {
    if (core[i] == '=') eq = i;
    if (core[i] == ':' && colon == std::string_view::npos) colon = i;
  }
  const size_t sep = eq != std::string_view::npos ? eq : colon;
  if (sep != std::string_view::npos && sep > 0 && sep + 1 < core.size()) {
    if (!IsVariable(core.substr(sep + 1))) {
      out->append(token);
    } else {
      out->append(prefix).append(core.substr(0, sep + 1)).append(kWild).append(suffix);
    }
    return;
  }
  if (IsVariable(core)) {
    out->append(prefix).append(kWild).append(suffix);
    return;
  }
  out->append(token);
}

// ---------------------------------------------------------------------------
// The miner

struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct LogTemplateMiner::Node {
  Node* parent = nullptr;
  std::string key;  // in parent's children, for pruning
  std::unordered_map<std::string, std::unique_ptr<Node>, KeyHash, std::equal_to<>> children;
  std::vector<Cluster*> clusters;  // at a leaf
};

struct LogTemplateMiner::Cluster {
  uint64_t id = 0;
  std::vector<std::string> tokens;
  TemplateSeverity severity = TemplateSeverity::kInfo;
  uint64_t count = 0;  // window lines
  uint64_t baseline_count = 0;
  int64_t first_ms = 0;
  int64_t last_ms = 0;
  std::string example;
  uint8_t streams = 0;
  bool spared = false;   // an error template's second chance was used
  uint64_t touched = 0;  // when last created or matched (clock_)
  Node* leaf = nullptr;
  size_t bytes = 0;  // counted in bytes_
  std::list<Cluster>::iterator self;
};

size_t LogTemplateMiner::NodeBytes(const Node& node) {
  // The node, its key twice (its own and its parent's map entry's).
  return sizeof(Node) + 2 * HeapBytes(node.key) + sizeof(std::string) + sizeof(void*) +
         kMapEntryBytes;
}

namespace {

// Token count with the severity in front: the first tree layer.
std::string_view LengthKey(TemplateSeverity severity, size_t n, char (&buf)[24]) {
  buf[0] = static_cast<char>('0' + static_cast<int>(severity));
  auto r = std::to_chars(buf + 1, buf + sizeof(buf), n);
  return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace

LogTemplateMiner::LogTemplateMiner(LogTemplateOptions options)
    : options_(options), root_(std::make_unique<Node>()) {
  options_.depth = std::max<size_t>(options_.depth, 3);
  options_.max_children = std::max<size_t>(options_.max_children, 1);
  options_.max_templates = std::max<size_t>(options_.max_templates, 1);
  options_.max_leaf_templates = std::max<size_t>(options_.max_leaf_templates, 1);
  options_.max_tokens = std::max<size_t>(options_.max_tokens, 1);
  options_.max_line_bytes = std::max<size_t>(options_.max_line_bytes, 16);
  options_.max_record_lines = std::max<size_t>(options_.max_record_lines, 1);
  options_.max_example_bytes = std::max<size_t>(options_.max_example_bytes, 16);
}

LogTemplateMiner::~LogTemplateMiner() = default;

void LogTemplateMiner::StartWindow() { in_window_ = true; }

void LogTemplateMiner::AddDropped(uint64_t lines) {
  totals_.lines += lines;
  (in_window_ ? totals_.window_lines : totals_.baseline_lines) += lines;
  totals_.dropped_lines += lines;
}

void LogTemplateMiner::Add(std::string_view record, int64_t time_ms, wire::LogLevel level,
                           uint8_t stream) {
  const uint64_t dropped =
      ForEachLine(record, options_.max_record_lines, [&](std::string_view line, size_t n) {
        AddLine(line, time_ms, n == 0 ? level : wire::LogLevel::kUnknown, stream);
      });
  if (dropped > 0) AddDropped(dropped);
}

void LogTemplateMiner::AddLine(std::string_view raw, int64_t time_ms, wire::LogLevel level,
                               uint8_t stream) {
  ++totals_.lines;
  ++(in_window_ ? totals_.window_lines : totals_.baseline_lines);
  bool truncated = raw.size() > options_.max_line_bytes;
  std::string_view line = raw;
  if (!AlreadyPrintable(raw, options_.max_line_bytes)) {
    printable_ = PrintableLine(raw, options_.max_line_bytes);
    line = printable_;
  }
  if (TrimSpace(line).empty()) {
    ++totals_.blank_lines;
    return;
  }
  Tokenize(line);
  truncated |= capped_;
  if (truncated) ++totals_.truncated_lines;
  const TemplateSeverity severity = GuessSeverity(line, level);
  Node* leaf = FindLeaf(severity);
  Cluster* c = leaf != nullptr ? Match(leaf) : nullptr;
  const bool fresh = c == nullptr;
  if (fresh) {
    c = NewCluster(severity);
  } else {
    Merge(c);
    Touch(c);
  }
  Record(c, line, time_ms, stream);
  if (fresh) Evict();
}

// Splits on spaces (PrintableLine made every other blank one) and masks each
// token; past max_tokens, the rest of the line is one <*>.
void LogTemplateMiner::Tokenize(std::string_view line) {
  masked_.clear();
  spans_.clear();
  tokens_.clear();
  capped_ = false;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < line.size() && line[j] != ' ') ++j;  // tokens are short: no memchr call
    if (spans_.size() == options_.max_tokens) {
      masked_.resize(spans_.back().first);
      spans_.back().second = kWild.size();
      masked_.append(kWild);
      capped_ = true;
      break;
    }
    const size_t at = masked_.size();
    MaskToken(line.substr(i, j - i), &masked_);
    spans_.emplace_back(at, masked_.size() - at);
    i = j;
  }
  for (auto [at, len] : spans_) tokens_.push_back(std::string_view(masked_).substr(at, len));
}

LogTemplateMiner::Node* LogTemplateMiner::Child(Node* node, std::string_view key, bool create) {
  auto it = node->children.find(key);
  if (it != node->children.end()) return it->second.get();
  if (!create) return nullptr;
  auto child = std::make_unique<Node>();
  child->parent = node;
  child->key = std::string(key);
  bytes_ += NodeBytes(*child);
  Node* raw = child.get();
  node->children.emplace(std::string(key), std::move(child));
  return raw;
}

size_t LogTemplateMiner::TokenLayers() const {
  // Drain3: a line of n tokens descends at most n - 1 of them.
  return tokens_.empty() ? 0 : std::min(options_.depth - 3, tokens_.size() - 1);
}

LogTemplateMiner::Node* LogTemplateMiner::FindLeaf(TemplateSeverity severity) const {
  char buf[24];
  auto it = root_->children.find(LengthKey(severity, tokens_.size(), buf));
  if (it == root_->children.end()) return nullptr;
  Node* node = it->second.get();
  for (size_t i = 0; i < TokenLayers(); ++i) {
    auto next = node->children.find(tokens_[i]);
    if (next == node->children.end()) next = node->children.find(kWild);
    if (next == node->children.end()) return nullptr;
    node = next->second.get();
  }
  return node;
}

// Where a new template goes: a token with digits, or any new token once the
// node is full, takes the <*> branch (Drain3's add_seq_to_prefix_tree).
LogTemplateMiner::Node* LogTemplateMiner::InsertPath(TemplateSeverity severity) {
  char buf[24];
  Node* node = Child(root_.get(), LengthKey(severity, tokens_.size(), buf), true);
  for (size_t i = 0; i < TokenLayers(); ++i) {
    const std::string_view token = tokens_[i];
    if (Node* c = Child(node, token, false)) {
      node = c;
      continue;
    }
    const bool has_wild = Child(node, kWild, false) != nullptr;
    const size_t room = options_.max_children - (has_wild ? 0 : 1);
    const bool literal = !HasDigit(token) && token != kWild && node->children.size() < room;
    node = Child(node, literal ? token : kWild, true);
  }
  return node;
}

// The leaf's most similar template when similar enough: the share of
// positions where both agree (a <*> in both counts: masking made them so),
// ties to the more general one (Drain3's fast_match).
LogTemplateMiner::Cluster* LogTemplateMiner::Match(Node* leaf) const {
  Cluster* best = nullptr;
  double best_sim = -1;
  size_t best_params = 0;
  const size_t n = tokens_.size();
  // Fewer equal positions than this cannot match: a template stops being
  // compared once its remaining tokens cannot get there.
  const double need = options_.similarity * static_cast<double>(n) - 1e-9;
  for (Cluster* c : leaf->clusters) {
    if (c->tokens.size() != n) continue;
    size_t same = 0, params = 0, i = 0;
    for (; i < n && static_cast<double>(same + (n - i)) >= need; ++i) {
      const bool wild = c->tokens[i] == kWild;
      params += wild;
      same += wild ? tokens_[i] == kWild : c->tokens[i] == tokens_[i];
    }
    if (i < n) continue;
    const double sim = static_cast<double>(same) / static_cast<double>(n);
    if (sim > best_sim || (sim == best_sim && params > best_params)) {
      best = c;
      best_sim = sim;
      best_params = params;
    }
  }
  return best_sim >= options_.similarity ? best : nullptr;
}

LogTemplateMiner::Cluster* LogTemplateMiner::NewCluster(TemplateSeverity severity) {
  Node* leaf = InsertPath(severity);
  // Every line routed here is compared with each template of the leaf: a
  // full leaf gives up its least recently matched one (all of a leaf's
  // templates have the same severity).
  if (leaf->clusters.size() >= options_.max_leaf_templates) Drop(LeafVictim(*leaf), false);
  lru_.emplace_front();
  Cluster* c = &lru_.front();
  c->self = lru_.begin();
  c->id = next_id_++;
  c->tokens.assign(tokens_.begin(), tokens_.end());
  c->severity = severity;
  c->touched = ++clock_;
  c->leaf = leaf;
  leaf->clusters.push_back(c);
  Recount(c);
  return c;
}

void LogTemplateMiner::Merge(Cluster* c) {
  bool changed = false;
  for (size_t i = 0; i < c->tokens.size(); ++i) {
    if (c->tokens[i] == tokens_[i] || c->tokens[i] == kWild) continue;
    std::string(kWild).swap(c->tokens[i]);  // swap, so a long token's buffer is freed
    changed = true;
  }
  if (changed) Recount(c);
}

void LogTemplateMiner::Record(Cluster* c, std::string_view line, int64_t time_ms, uint8_t stream) {
  const bool first = in_window_ ? c->count++ == 0 : c->baseline_count++ == 0;
  c->streams |= stream;
  if (first || time_ms < c->first_ms) {
    if (first) c->last_ms = time_ms;
    c->first_ms = time_ms;
    // The oldest line is the example, whatever order lines came in.
    const size_t max = options_.max_example_bytes;
    c->example = line.size() <= max ? std::string(line) : std::string(CutUtf8(line, max - 3)) + "…";
    c->example.shrink_to_fit();
    Recount(c);
  }
  c->last_ms = std::max(c->last_ms, time_ms);
}

void LogTemplateMiner::Touch(Cluster* c) {
  c->spared = false;
  c->touched = ++clock_;
  lru_.splice(lru_.begin(), lru_, c->self);
}

// Drops least recently matched templates until both bounds hold; an error
// template is moved to the front once instead (what a diagnosis is for).
void LogTemplateMiner::Evict() {
  while (lru_.size() > 1 && (lru_.size() > options_.max_templates || bytes_ > options_.max_bytes)) {
    Cluster& victim = lru_.back();
    if (victim.severity == TemplateSeverity::kError && !victim.spared) {
      victim.spared = true;
      lru_.splice(lru_.begin(), lru_, victim.self);
      continue;
    }
    Drop(&victim, true);
  }
}

LogTemplateMiner::Cluster* LogTemplateMiner::LeafVictim(const Node& leaf) const {
  Cluster* victim = nullptr;
  for (Cluster* c : leaf.clusters) {
    if (victim == nullptr || c->touched < victim->touched) victim = c;
  }
  return victim;
}

// Forgets a template (its lines are counted as evicted); `prune` removes
// tree branches left empty.
void LogTemplateMiner::Drop(Cluster* victim, bool prune) {
  ++totals_.evicted_templates;
  totals_.evicted_lines += victim->count + victim->baseline_count;
  bytes_ -= victim->bytes;
  Node* leaf = victim->leaf;
  std::erase(leaf->clusters, victim);
  lru_.erase(victim->self);
  if (prune) Prune(leaf);
}

// Removes `node` and its ancestors while they hold nothing.
void LogTemplateMiner::Prune(Node* node) {
  while (node != root_.get() && node->children.empty() && node->clusters.empty()) {
    Node* parent = node->parent;
    bytes_ -= NodeBytes(*node);
    parent->children.erase(parent->children.find(node->key));
    node = parent;
  }
}

void LogTemplateMiner::Recount(Cluster* c) {
  size_t b = sizeof(Cluster) + 2 * sizeof(void*)  // the list node's links
             + sizeof(Cluster*)                   // its slot in the leaf
             + c->tokens.capacity() * sizeof(std::string) + HeapBytes(c->example);
  for (const std::string& t : c->tokens) b += HeapBytes(t);
  bytes_ = bytes_ - c->bytes + b;
  c->bytes = b;
}

std::vector<LogTemplate> LogTemplateMiner::Templates() const {
  std::vector<LogTemplate> out;
  out.reserve(lru_.size());
  for (const Cluster& c : lru_) {
    LogTemplate& t = out.emplace_back();
    t.id = c.id;
    for (const std::string& token : c.tokens) {
      if (!t.text.empty()) t.text += ' ';
      t.text += token;
    }
    t.count = c.count;
    t.baseline_count = c.baseline_count;
    t.first_ms = c.first_ms;
    t.last_ms = c.last_ms;
    t.example = c.example;
    t.streams = c.streams;
    t.severity = c.severity;
    t.is_new = c.baseline_count == 0;
  }
  std::sort(out.begin(), out.end(),
            [](const LogTemplate& a, const LogTemplate& b) { return a.id < b.id; });
  return out;
}

LogTemplateTotals LogTemplateMiner::totals() const {
  LogTemplateTotals t = totals_;
  t.templates = lru_.size();
  return t;
}

// ---------------------------------------------------------------------------
// Ranking and rendering

LogTemplateSummary RankTemplates(const LogTemplateMiner& miner, size_t max_templates) {
  LogTemplateSummary s;
  s.totals = miner.totals();
  s.templates = miner.Templates();
  std::erase_if(s.templates, [](const LogTemplate& t) { return t.count == 0; });
  s.window_templates = s.templates.size();
  auto key = [](const LogTemplate& t) {
    return std::make_tuple(t.severity != TemplateSeverity::kError, !t.is_new, ~t.count, t.first_ms,
                           t.id);
  };
  std::sort(s.templates.begin(), s.templates.end(),
            [&](const LogTemplate& a, const LogTemplate& b) { return key(a) < key(b); });
  if (s.templates.size() > max_templates) s.templates.resize(max_templates);
  return s;
}

nlohmann::json LogTemplatesJson(const LogTemplateSummary& s) {
  nlohmann::json list = nlohmann::json::array();
  for (const LogTemplate& t : s.templates) {
    nlohmann::json streams = nlohmann::json::array();
    if (t.streams & kStreamStdout) streams.push_back("stdout");
    if (t.streams & kStreamStderr) streams.push_back("stderr");
    if (t.streams & kStreamOther) streams.push_back("other");
    list.push_back({{"template", t.text},
                    {"count", t.count},
                    {"first_ms", t.first_ms},
                    {"last_ms", t.last_ms},
                    {"example", t.example},
                    {"severity", TemplateSeverityName(t.severity)},
                    {"new", t.is_new},
                    {"baseline_count", t.baseline_count},
                    {"streams", std::move(streams)}});
  }
  const LogTemplateTotals& n = s.totals;
  return {{"log_templates", std::move(list)},
          {"log_template_totals",
           {{"lines", n.lines},
            {"baseline_lines", n.baseline_lines},
            {"window_lines", n.window_lines},
            {"blank_lines", n.blank_lines},
            {"truncated_lines", n.truncated_lines},
            {"dropped_lines", n.dropped_lines},
            {"templates", n.templates},
            {"window_templates", s.window_templates},
            {"evicted_templates", n.evicted_templates},
            {"evicted_lines", n.evicted_lines},
            {"read_capped", s.read_capped}}}};
}

std::vector<std::string> TemplateExcerpt(const LogTemplateSummary& s, size_t max_lines,
                                         size_t max_line_bytes) {
  std::vector<std::string> out;
  for (const LogTemplate& t : s.templates) {
    if (out.size() == max_lines) break;
    std::string line = "[" + std::string(TemplateSeverityName(t.severity)) + "] x" +
                       std::to_string(t.count) + (t.is_new ? " new: " : " ") + t.text;
    if (line.size() > max_line_bytes) {
      line = std::string(CutUtf8(line, max_line_bytes > 3 ? max_line_bytes - 3 : 0)) + "…";
    }
    out.push_back(std::move(line));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Reading the store

namespace {

struct HeldLine {
  int64_t time_ms = 0;
  wire::LogLevel level = wire::LogLevel::kUnknown;
  uint8_t stream = kStreamOther;
  std::string text;
};

// A record as the miner needs it: each physical line's last '\r' update, cut
// one byte past max_line_bytes (so the miner still counts it as cut), at most
// max_record_lines; *dropped counts the lines left out.
std::string ClipRecord(std::string_view record, const LogTemplateOptions& o, uint64_t* dropped) {
  std::string out;
  *dropped += ForEachLine(record, o.max_record_lines, [&](std::string_view line, size_t n) {
    line = LastUpdate(line);
    if (n > 0) out += '\n';
    out.append(line.substr(0, std::min(line.size(), o.max_line_bytes + 1)));
  });
  return out;
}

struct ReadBounds {
  size_t max_lines = 0;
  size_t max_bytes = 0;
};

// The newest records of [start_ns, end_ns), oldest first, within `bounds`;
// sets *capped when there were more.
Status ReadNewest(const logstore::LogStore& store,
                  const std::vector<logstore::LabelMatcher>& matchers, int64_t start_ns,
                  int64_t end_ns, ReadBounds bounds, const LogTemplateOptions& o,
                  std::vector<HeldLine>* out, uint64_t* dropped, bool* capped) {
  logstore::LogQuery q;
  q.matchers = matchers;
  q.start_ns = std::max<int64_t>(0, start_ns);
  q.end_ns = end_ns;
  q.forward = false;
  size_t bytes = 0;
  bool full = false;
  // (A limit of 0 would be no limit to Query: max_lines 0 reads nothing.)
  while (!full && start_ns < end_ns && out->size() < bounds.max_lines) {
    q.limit = std::min(logstore::kMaxQueryLimit, bounds.max_lines - out->size());
    auto r = store.Query(q);
    if (!r.ok()) return r.status();
    for (const logstore::LogEntry& e : r->entries) {
      if (bytes >= bounds.max_bytes) {
        full = true;
        break;
      }
      HeldLine& h = out->emplace_back();
      h.time_ms = e.time_ns / kNsPerMs;
      h.level = e.level;
      h.stream = e.labels ? StreamKindOf(*e.labels) : kStreamOther;
      h.text = ClipRecord(e.line, o, dropped);
      bytes += h.text.size();
    }
    if (!r->truncated || r->entries.empty()) break;
    // The limit was reached: a full read may have had more (or just ended).
    full = full || out->size() >= bounds.max_lines;
    q.after = std::make_pair(r->entries.back().time_ns, r->entries.back().seq);
  }
  std::reverse(out->begin(), out->end());
  *capped = *capped || full;
  return Status::Ok();
}

Status Feed(const logstore::LogStore& store, const std::vector<logstore::LabelMatcher>& matchers,
            int64_t start_ms, int64_t end_ms, ReadBounds bounds, const LogTemplateOptions& o,
            LogTemplateMiner* miner, bool* capped) {
  std::vector<HeldLine> lines;
  uint64_t dropped = 0;
  Status st = ReadNewest(store, matchers, start_ms * kNsPerMs, end_ms * kNsPerMs, bounds, o, &lines,
                         &dropped, capped);
  if (!st.ok()) return st;
  for (const HeldLine& h : lines) miner->Add(h.text, h.time_ms, h.level, h.stream);
  miner->AddDropped(dropped);
  return Status::Ok();
}

}  // namespace

Result<LogTemplateSummary> LogTemplatesFor(const logstore::LogStore& store,
                                           const std::vector<logstore::LabelMatcher>& matchers,
                                           int64_t at_ms, const LogTemplateWindow& w,
                                           const LogTemplateOptions& options) {
  LogTemplateMiner miner(options);
  const int64_t window_start = at_ms - w.window_before_ms;
  bool capped = false;
  Status st = Feed(store, matchers, window_start - w.baseline_ms, window_start,
                   {w.max_baseline_lines, w.max_read_bytes}, options, &miner, &capped);
  if (!st.ok()) return st;
  miner.StartWindow();
  st = Feed(store, matchers, window_start, at_ms + w.late_ms,
            {w.max_window_lines, w.max_read_bytes}, options, &miner, &capped);
  if (!st.ok()) return st;
  LogTemplateSummary s = RankTemplates(miner, w.max_templates);
  s.read_capped = capped;
  return s;
}

Result<LogTemplateSummary> JobLogTemplates(const logstore::LogStore& store, const JobReport& report,
                                           int64_t at_ms, const LogTemplateWindow& window,
                                           const LogTemplateOptions& options) {
  if (!report.by_run && report.job.name.empty()) return LogTemplateSummary{};
  using logstore::MatchType;
  std::vector<logstore::LabelMatcher> matchers = {
      report.by_run ? logstore::LabelMatcher{MatchType::kEqual, "run", report.job.id}
                    : logstore::LabelMatcher{MatchType::kEqual, "job", report.job.name},
      {MatchType::kEqual, "node", report.node}};
  return LogTemplatesFor(store, matchers, at_ms, window, options);
}

}  // namespace vigil::diagnose
