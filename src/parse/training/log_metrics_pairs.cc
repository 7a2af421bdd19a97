// The generic forms, a key and its value, in whatever line they stand:
// key=value and logfmt, "key: value" (Keras, DeepSpeed, PaddlePaddle,
// torchvision's MetricLogger), Python dicts and JSON objects (Hugging Face
// Trainer's {'loss': 1.2, ...}; a nested object is a configuration),
// Megatron's "learning rate: 1.0E-04 |", argparse Namespace dumps (marked
// as configuration) and MindSpore's "loss is 0.12". Dicts, JSON and
// key=value are one scanner: they differ only in quotes and separators,
// which KeyBefore and ValueAt read. Separate from the framework formats as
// it recognises no framework: what it finds in a line of no known format is
// gated on the key looking like a metric's (SegmentParser::Finish).
#include <algorithm>
#include <bit>
#include <string>

#include "parse/training/log_metrics_internal.h"

namespace vigil::parse::training::internal {
namespace {

bool LevelWord(std::string_view w) {
  static constexpr std::string_view kLevels[] = {"INFO",  "WARN",     "WARNING", "ERROR",
                                                 "DEBUG", "CRITICAL", "NOTICE",  "TRACE"};
  for (std::string_view l : kLevels) {
    if (w == l) return true;
  }
  return false;
}

// The key that ends right before s[end]: 'quoted', "quoted", a bare
// token, or up to kMaxKeyWords words with an optional "(unit)" after them
// (Megatron's "elapsed time per iteration (ms)").
bool KeyBefore(std::string_view s, size_t end, bool allow_words, std::string* arena, Key* key) {
  size_t floor = end > kMaxKeyLen ? end - kMaxKeyLen : 0;
  key->off = arena->size();
  if (end > 0 && (s[end - 1] == '\'' || s[end - 1] == '"')) {
    char q = s[end - 1];
    size_t b = end - 1;
    bool space = false;
    while (b > floor && s[b - 1] != q) {
      // A name is key bytes and spaces; a '\n', ',' or '{' before the quote
      // is not a name either.
      char c = s[b - 1];
      if (!IsKeyChar(c) && c != ' ') return false;
      space = space || c == ' ';
      --b;
    }
    if (b == floor || b + 1 >= end) return false;
    std::string_view name = s.substr(b, end - 1 - b);
    if (name.empty() || !(IsAlpha(name[0]) || name[0] == '_')) return false;
    key->multi_word = space;
    if (!key->multi_word) {  // written as it stands: no copy
      key->in_line = true;
      key->off = b;
      key->len = name.size();
      return true;
    }
    AppendNormalized(arena, key->off, name, false);
    key->len = arena->size() - key->off;
    return key->len > 0;
  }
  size_t e = end;
  std::string_view paren;
  if (e > 0 && s[e - 1] == ')') {
    size_t b = e - 1;
    while (b > floor && s[b - 1] != '(') {
      if (s[b - 1] == '|' || s[b - 1] == ')') return false;
      --b;
    }
    if (b == floor || b < 2 || s[b - 2] != ' ') return false;
    paren = s.substr(b, e - 1 - b);
    e = b - 2;
  }
  size_t b = e;
  while (b > floor && IsKeyChar(s[b - 1])) --b;
  std::string_view token = s.substr(b, e - b);
  // "epoch=0/micro_step=1": a value and '/' before the key belong to the
  // pair before.
  while (!token.empty() && !(IsAlpha(token[0]) || token[0] == '_')) {
    size_t slash = token.find('/');
    if (slash == std::string_view::npos) return false;
    token.remove_prefix(slash + 1);
    b = e - token.size();
  }
  if (token.empty() || token.back() == '.' || token.back() == '-') return false;
  // More words before it, each a run of letters after a single space.
  size_t words = 1;
  size_t begin = b;
  while (allow_words && words < kMaxKeyWords && begin >= 2 && begin > floor + 1 &&
         s[begin - 1] == ' ' && IsWordChar(s[begin - 2])) {
    size_t w = begin - 1;
    while (w > floor && IsWordChar(s[w - 1])) --w;
    // A word begins with a letter ("mtp_1 loss" is one key; in "epoch 3
    // loss" the 3 is a value), or is an index after a name that is no
    // counter ("Style 1 loss", neural-style's per-layer losses).
    if (!IsAlpha(s[w])) {
      bool digits = std::all_of(s.begin() + static_cast<std::ptrdiff_t>(w),
                                s.begin() + static_cast<std::ptrdiff_t>(begin - 1), IsDigit);
      size_t n = w;  // the word before the index
      if (!digits || n < 2 || s[n - 1] != ' ' || !IsAlpha(s[n - 2])) break;
      size_t nb = n - 1;
      while (nb > floor && IsAlpha(s[nb - 1])) --nb;
      std::string_view name = s.substr(nb, n - 1 - nb);
      if (EqualsLower(name, "epoch") || EqualsLower(name, "step") || EqualsLower(name, "iter") ||
          EqualsLower(name, "iteration") || EqualsLower(name, "batch")) {
        break;
      }
      if (nb > 0 && (IsKeyChar(s[nb - 1]) || s[nb - 1] == '\'' || s[nb - 1] == '"')) break;
      begin = nb;
      words += 2;
      continue;
    }
    if (w > 0 && (IsKeyChar(s[w - 1]) || s[w - 1] == '\'' || s[w - 1] == '"')) break;
    if (LevelWord(s.substr(w, begin - 1 - w))) break;
    size_t before = w;
    while (before > floor && IsSpace(s[before - 1])) --before;
    // A value: "mode: train loss: 0.1"; not after a counter's label
    // ("step 1: loss train (curr): 1.6", litgpt).
    if (before > 1 && (s[before - 1] == ':' || s[before - 1] == '=') && IsKeyChar(s[before - 2]) &&
        !IsDigit(s[before - 2])) {
      break;
    }
    begin = w;
    ++words;
  }
  if (begin != b && !IsAlpha(s[begin])) return false;
  if (begin == b && paren.empty()) {  // one token, all key bytes: no copy
    key->in_line = true;
    key->off = b;
    key->len = e - b;
    key->multi_word = false;
    return true;
  }
  AppendNormalized(arena, key->off, s.substr(begin, e - begin), false);
  if (!paren.empty()) {
    arena->push_back('_');
    AppendNormalized(arena, arena->size(), paren, true);
    while (arena->size() > key->off && arena->back() == '_') arena->pop_back();
  }
  key->len = arena->size() - key->off;
  key->multi_word = words > 1 || !paren.empty();
  return key->len > 0;
}

// Whether a key with its separator starts at s[i] ("lr: ", "val_loss=",
// "learning rate:"): what may follow a value in a run of pairs.
bool KeyAhead(std::string_view s, size_t i) {
  if (i < s.size() && (s[i] == '\'' || s[i] == '"')) ++i;
  size_t limit = std::min(s.size(), i + kMaxKeyLen);
  if (i >= limit || !(IsAlpha(s[i]) || s[i] == '_')) return false;
  size_t words = 0;
  while (i < limit && words < kMaxKeyWords) {
    while (i < limit && IsKeyChar(s[i])) ++i;
    ++words;
    if (i < limit && (s[i] == '\'' || s[i] == '"')) ++i;
    if (i < limit && (s[i] == '=' || s[i] == ':')) return true;
    if (i + 1 < limit && s[i] == ' ' && s[i + 1] == '(') {
      size_t close = s.substr(0, limit).find(')', i);
      if (close == std::string_view::npos) return false;
      i = close + 1;
      return i < s.size() && s[i] == ':';
    }
    if (i + 1 < limit && s[i] == ' ' && IsAlpha(s[i + 1])) {
      ++i;
      continue;
    }
    // A key padded to a column before its separator: DLLogger's
    // "step_loss : 10.7  learning_rate : 5.9e-06", "Num Epochs = 3".
    size_t pad = i;
    while (pad < limit && IsSpace(s[pad]) && pad - i < 32) ++pad;
    if (pad > i && pad < limit && s[pad] == '=') return true;
    if (pad > i && pad < limit && s[pad] == ':') return pad + 1 >= s.size() || IsSpace(s[pad + 1]);
    return false;
  }
  return false;
}

// Whether a cell with no separator starts at s[i]: a word, spaces and a
// number ("loss: 0.2830 time 1.49s", MONAI).
bool CellAhead(std::string_view s, size_t i) {
  size_t limit = std::min(s.size(), i + kMaxKeyLen);
  if (i >= limit || !IsAlpha(s[i])) return false;
  while (i < limit && IsWordChar(s[i])) ++i;
  if (i >= limit || !IsSpace(s[i])) return false;
  while (i < limit && IsSpace(s[i])) ++i;
  double v;
  size_t end;
  // "LR: 9.904e-02   Score nan": a non-finite word is a value too.
  bool word = i + 3 <= s.size() &&
              (EqualsLower(s.substr(i, 3), "nan") || EqualsLower(s.substr(i, 3), "inf"));
  return i < limit && (IsDigit(s[i]) || word) && ParseNumber(s, i, &v, &end);
}

// Whether the value that ended at s[j] is complete: the end, a delimiter,
// or spaces then another pair, a delimiter, Keras' " - " or a " / ".
bool ValueEnds(std::string_view s, size_t j) {
  if (j >= s.size()) return true;
  char c = s[j];
  if (c == ',') return !(j + 1 < s.size() && IsDigit(s[j + 1]));  // "10,000"
  if (c == ';' || c == '|' || c == ')' || c == ']' || c == '}' || c == '>') return true;
  if (c == '/') return j + 1 < s.size() && IsAlpha(s[j + 1]);   // "epoch=0/micro_step=1"
  if (c == ':') return j + 1 >= s.size() || IsSpace(s[j + 1]);  // tqdm "desc: 42%"
  if (!IsSpace(c)) return false;
  size_t k = j;
  while (k < s.size() && IsSpace(s[k])) ++k;
  if (k == s.size()) return true;
  c = s[k];
  if (c == ',' || c == ';' || c == '|' || c == ')' || c == ']' || c == '}') return true;
  if (c == '(') return true;  // torchvision's "loss: 2.1234 (2.3012)": the value, then an average
  // Keras' " - ", NVIDIA's TF2 BERT " / " ("loss = 11.15 / time = 0.13 sec").
  if (c == '-' || c == '/') return k + 1 == s.size() || IsSpace(s[k + 1]);
  if (s.substr(k, 3) == "...") return true;  // "Start Training Epoch 9, lr=0.009845 ..."
  return KeyAhead(s, k) || CellAhead(s, k);
}

// A value after a separator: a number with an optional unit, a one-element
// list "[0.0001]" (DeepSpeed's lr per group: the first), or a PyTorch
// "tensor(0.5, device='cuda:0')".
// *at: where the number itself starts (inside "[...]" or "tensor(").
bool ValueAt(std::string_view s, size_t i, double* v, size_t* at, size_t* end) {
  *at = i;
  // A JSON string holding a number (fairseq's json log: "loss": "3.097").
  if (i < s.size() && s[i] == '"' && i > 0) {
    size_t e;
    if (!ParseNumber(s, i + 1, v, &e) || e >= s.size() || s[e] != '"') return false;
    *at = i + 1;
    *end = e + 1;
    return ValueEnds(s, *end);
  }
  // A list's or a tuple's first element: DeepSpeed's lr per group
  // "[0.0001]", BasicSR's "lr:(2.000e-04,)".
  if (i < s.size() && (s[i] == '[' || s[i] == '(')) {
    const char close_char = s[i] == '[' ? ']' : ')';
    size_t j = i + 1;
    while (j < s.size() && IsSpace(s[j])) ++j;
    *at = j;
    size_t e;
    if (!ParseNumber(s, j, v, &e)) return false;
    size_t close = s.substr(0, std::min(s.size(), e + 256)).find(close_char, e);
    if (close == std::string_view::npos) return false;
    for (size_t k = e; k < close; ++k) {
      if (s[k] == '[' || s[k] == '(') return false;
    }
    // A tuple has a comma: "(0.5)" is an aside, not a value.
    if (close_char == ')' && s.substr(e, close - e).find(',') == std::string_view::npos) {
      return false;
    }
    *end = close + 1;
    return ValueEnds(s, *end);
  }
  // A dict by parameter group, its first group's value: InternEvo's
  // "grad_norm={'0_default': 2.15, '1_fp32': 0.0}". Only with group
  // indexes for keys: a dict of named parts is not the whole.
  if (i + 3 < s.size() && s[i] == '{' && (s[i + 1] == '\'' || s[i + 1] == '"') &&
      IsDigit(s[i + 2])) {
    size_t q = s.find(s[i + 1], i + 2);
    if (q == std::string_view::npos || q - i > 32 || q + 2 >= s.size() || s[q + 1] != ':') {
      return false;
    }
    size_t j = q + 2;
    while (j < s.size() && IsSpace(s[j])) ++j;
    *at = j;
    size_t e;
    if (!ParseNumber(s, j, v, &e)) return false;
    size_t close = s.substr(0, std::min(s.size(), e + 256)).find('}', e);
    if (close == std::string_view::npos ||
        s.substr(e, close - e).find('{') != std::string_view::npos) {
      return false;
    }
    *end = close + 1;
    return ValueEnds(s, *end);
  }
  if (s.substr(i, 7) == "tensor(") {
    *at = i + 7;
    size_t e;
    if (!ParseNumber(s, i + 7, v, &e)) return false;
    size_t close = s.substr(0, std::min(s.size(), e + 128)).find(')', e);
    if (close == std::string_view::npos) return false;
    *end = close + 1;
    return ValueEnds(s, *end);
  }
  size_t e;
  if (!ParseNumber(s, i, v, &e)) return false;
  if (e < s.size() && s[e] == '.' && (e + 1 == s.size() || IsSpace(s[e + 1]))) {
    *end = e;  // the end of a sentence: BigDL's "Loss is 9.9E-5. Current ..."
    return true;
  }
  if (e + 1 < s.size() && s[e] == ' ' && IsUnitChar(s[e + 1])) {
    // A unit after one space: PaddlePaddle's "batch_cost: 1.1 s, ips: 7.2 samples/s".
    Unit spaced = ReadUnit(s, e + 1);
    if (spaced.kind != UnitKind::kUnknown && spaced.kind != UnitKind::kNone &&
        ValueEnds(s, spaced.end)) {
      *end = spaced.end;
      return true;
    }
  }
  Unit unit = ReadUnit(s, e);
  if (unit.kind == UnitKind::kUnknown) {
    *end = e;  // "0/micro_step=1": no unit, the value ends there or not at all
    // Another print glued on with no newline: Keras' "loss: 44.4110Batch 3:
    // Invalid loss" (a capitalised word of three letters or more, then a
    // space or ':').
    size_t w = e + 1;
    while (w < s.size() && s[w] >= 'a' && s[w] <= 'z') ++w;
    bool glued =
        s[e] >= 'A' && s[e] <= 'Z' && w - e >= 3 && (w == s.size() || s[w] == ' ' || s[w] == ':');
    return glued || ValueEnds(s, e);
  }
  if (unit.end < s.size() && (IsDigit(s[unit.end]) || s[unit.end] == '.' || s[unit.end] == '_')) {
    return false;  // "1.2.3", "3e", "v1_2"
  }
  *end = unit.end;
  return ValueEnds(s, *end);
}

// The name of the `name[...]` group the key at s[key_off] stands in, or
// empty: icefall's "loss[loss=0.6, simple_loss=1.2, ...], tot_loss[loss=0.7,
// ...]" (this batch and the running average). Brackets closed before it
// ("[2022-06-08 08:01:22] [train.py:815]") and a '[' after no name (a
// tqdm postfix "[00:21, loss=0.1]") are no group.
std::string_view GroupOf(std::string_view s, size_t key_off) {
  size_t floor = key_off > 4 * kMaxKeyLen ? key_off - 4 * kMaxKeyLen : 0;
  int depth = 0;
  for (size_t i = key_off; i > floor; --i) {
    char c = s[i - 1];
    if (c == '{' || c == '}') return {};
    if (c == ']') ++depth;
    if (c != '[') continue;
    if (depth > 0) {
      --depth;
      continue;
    }
    size_t b = i - 1;
    while (b > floor && IsWordChar(s[b - 1])) --b;
    if (b == i - 1 || !IsAlpha(s[b])) return {};
    return s.substr(b, i - 1 - b);
  }
  return {};
}

}  // namespace

// A key inside a `name[...]` group is that group's: "loss/loss",
// "tot_loss/loss" (names, log_metrics_names.cc, read "loss/" as a group
// of metrics and "tot_loss/" as no name of one).
void SegmentParser::QualifyByGroup(Key* key) {
  if (!line_.bracket || !key->in_line) return;
  // Most lines with a '[' have no "name[" (timestamps, tqdm): looked for
  // once per segment, not back from every key.
  if (named_groups_ < 0) {
    named_groups_ = 0;
    for (size_t i = s_.find('[', 1); i != std::string_view::npos; i = s_.find('[', i + 1)) {
      if (IsWordChar(s_[i - 1])) {
        named_groups_ = 1;
        break;
      }
    }
  }
  if (named_groups_ == 0) return;
  std::string_view group = GroupOf(s_, key->off);
  if (group.empty()) return;
  std::string_view name = s_.substr(key->off, key->len);
  key->in_line = false;
  key->off = arena_->size();
  arena_->append(group);
  arena_->push_back('/');
  arena_->append(name);
  key->len = arena_->size() - key->off;
}

// MindSpore's LossMonitor: "epoch: 1 step: 1875, loss is 0.1234". Read
// only for a key that looks like a metric: "batch size is 32" is prose.
bool SegmentParser::PairIs(size_t at) {
  size_t i = at + 4;
  if (i >= tqdm_begin_ && i < tqdm_end_) return false;
  double v;
  size_t value_at, end;
  if (!ValueAt(s_, i, &v, &value_at, &end)) return false;
  Key key;
  if (!KeyBefore(s_, at, true, arena_, &key)) return false;  // "Current learning rate is"
  size_t before = count_;
  if (!AddKeyed(value_at, key, v, Source::kPair)) return false;
  if (!found_[before].metric_looking) {
    --count_;
    return false;
  }
  return true;
}

// key=value, key = value, key: value, 'key': value, "key":value.
bool SegmentParser::PairAt(size_t sep) {
  std::string_view s = s_;
  char c = s[sep];
  size_t i = sep + 1;
  bool quoted_key = sep > 0 && (s[sep - 1] == '\'' || s[sep - 1] == '"');
  // "loss:8.863 lr:0.0002" (minimind, torchtune) is written without a space;
  // so are "cuda:0", "10:00" and "host:8080": such a pair counts only when
  // its key names a metric.
  bool tight = false, padded = false;
  // "train/loss     : 7.6923": a key padded to a column before its ':'
  // counts, as a tight pair does, only when it names a metric.
  size_t key_end = sep;
  if (c == ':') {
    tight = i < s.size() && !IsSpace(s[i]) && !quoted_key;
    if (tight && (sep < 2 || s[sep - 2] == ':')) return false;  // "a::b", IPv6
    if (sep > 0 && IsSpace(s[sep - 1])) {
      while (key_end > 0 && IsSpace(s[key_end - 1]) && sep - key_end < 32) --key_end;
      if (tight || key_end == 0 || !IsKeyChar(s[key_end - 1])) return false;
      padded = true;
    }
  }
  size_t spaces = 0;
  while (i < s.size() && IsSpace(s[i]) && spaces < 32) ++i, ++spaces;
  if (i >= tqdm_begin_ && i < tqdm_end_) return false;  // "Map: 100%|" is a bar
  double v;
  size_t value_at, end;
  if (!ValueAt(s_, i, &v, &value_at, &end)) {
    // No one value: perhaps one for each of names joined by '-'.
    return c == ':' && !tight && !padded && sep > 0 && i < s.size() && IsDigit(s[i]) &&
           IsAlpha(s[sep - 1]) && JoinedNames(sep, i);
  }
  if (c == '=') {
    while (key_end > 0 && IsSpace(s[key_end - 1]) && sep - key_end < 64) --key_end;
  }
  // Words before a key: "learning rate: 0.1", HF's "Num Epochs = 3"; not
  // logfmt's "a=1 b=2", where the word before is the last value.
  bool allow_words = c == ':' || key_end < sep;
  Key key;
  if (!KeyBefore(s, key_end, allow_words && !tight && !padded, arena_, &key)) return false;
  QualifyByGroup(&key);
  if (tight) {
    // A word, not a path or a file name ("Loss.cu:250", "/a/loss.py:12").
    std::string_view written =
        (key.in_line ? s : std::string_view(*arena_)).substr(key.off, key.len);
    if (key.off > 0 && key.in_line && (s[key.off - 1] == '/' || s[key.off - 1] == '.'))
      return false;
    // Path groups of metric names are words too: verl's "actor/lr:0.000".
    for (char k : written) {
      if (!IsWordChar(k) && !(k == '/' && IsAlpha(written[0]))) return false;
    }
  }
  size_t before = count_;
  if (!AddKeyed(value_at, key, v, Source::kPair)) return false;
  if ((tight || padded) && !found_[before].metric_looking) {
    --count_;
    return false;
  }
  return true;
}

// Names joined by '-' and as many numbers after the ':', one a name, in
// order: insightface's "lr-batch-epoch: 0.01 8999 0". Taken only when the
// counts agree and nothing but the numbers follows; the names are then
// read one by one (AddKeyed), so only those that name a metric are kept.
[[gnu::noinline, gnu::cold]] bool SegmentParser::JoinedNames(size_t sep, size_t value_begin) {
  std::string_view s = s_;
  size_t floor = sep > kMaxKeyLen ? sep - kMaxKeyLen : 0;
  size_t b = sep;
  while (b > floor && IsKeyChar(s[b - 1])) --b;
  std::string_view names = s.substr(b, sep - b);
  if (names.find('-') == std::string_view::npos) return false;
  constexpr size_t kMaxNames = 4;
  size_t name_off[kMaxNames], name_len[kMaxNames];
  size_t n = 0;
  for (size_t at = 0; at <= names.size();) {
    size_t e = names.find('-', at);
    if (e == std::string_view::npos) e = names.size();
    if (n == kMaxNames || e == at || !IsAlpha(names[at])) return false;
    for (size_t k = at; k < e; ++k) {
      if (!IsWordChar(names[k])) return false;
    }
    name_off[n] = b + at;
    name_len[n++] = e - at;
    at = e + 1;
  }
  if (n < 2) return false;
  size_t value_pos[kMaxNames];
  double values[kMaxNames];
  size_t k = 0, at = value_begin;
  for (; k < n; ++k) {
    if (k > 0) {
      if (at >= s.size() || s[at] != ' ') return false;
      ++at;
    }
    size_t e;
    if (!ParseNumber(s, at, &values[k], &e) || (e < s.size() && !IsSpace(s[e]))) return false;
    value_pos[k] = at;
    at = e;
  }
  while (at < s.size() && IsSpace(s[at])) ++at;
  if (at != s.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    Key part;
    part.in_line = true;
    part.off = name_off[i];
    part.len = name_len[i];
    AddKeyed(value_pos[i], part, values[i], Source::kPair);
  }
  return true;
}

// A Python (name, value) tuple: FunASR's "[('loss_att', 0.659), ('loss', 0.332)]".
bool SegmentParser::PairTuple(size_t open) {
  std::string_view s = s_;
  size_t i = open + 1;
  if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) return false;
  char q = s[i];
  size_t close = s.find(q, i + 1);
  if (close == std::string_view::npos || close - i > kMaxKeyLen || s.substr(close + 1, 2) != ", ") {
    return false;
  }
  double v;
  size_t end;
  if (!ParseNumber(s, close + 3, &v, &end) || end >= s.size() || s[end] != ')') return false;
  Key key;
  key.in_line = true;
  key.off = i + 1;
  key.len = close - i - 1;
  if (key.len == 0 || !IsAlpha(s[key.off])) return false;
  for (size_t k = key.off; k < close; ++k) {
    if (!IsKeyChar(s[k])) return false;
  }
  return AddKeyed(close + 3, key, v, Source::kPair);
}

void SegmentParser::ScanPairs() {
  int depth = 0;
  // Visits only the bytes that can matter (PairBits), found 16 at a time.
  for (size_t base = 0, block = 0; base < s_.size() && !Full(); base += 16, ++block) {
    uint32_t bits = whole_ && block < line_.blocks ? line_.pair_bits[block]
                                                   : PairBits(Load16(s_, base), s_, base);
    for (; bits != 0 && !Full(); bits &= bits - 1) {
      size_t i = base + static_cast<size_t>(std::countr_zero(bits));
      char c = s_[i];
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (c == ' ' && s_.substr(i, 4) == " is ") PairIs(i);
      if (c == '(' && i >= 9 && s_.substr(i - 9, 9) == "Namespace") config_ = true;
      if (c == '(') PairTuple(i);
      if (c != '=' && c != ':') continue;
      // " : " between cells (Marian), counted for Parse's cell scan.
      if (c == ':' && i > 0 && i + 1 < s_.size() && s_[i - 1] == ' ' && s_[i + 1] == ' ') {
        ++spaced_colons_;
      }
      // A nested object is a configuration ("params": {"lr": 0.0001}).
      if (depth >= 2) continue;
      if (c == '=') {
        size_t at = i + 1;
        while (at < s_.size() && IsSpace(s_[at]) && at - i < 8) ++at;
        std::string_view value = s_.substr(at, 6);
        if (value.substr(0, 5) == "dict(" || value.substr(0, 4) == "True" ||
            value.substr(0, 5) == "False" || value.substr(0, 4) == "None") {
          config_ = true;  // Python arguments: "amp=True", "optimizer=dict(lr=0.02)"
        }
      }
      PairAt(i);
    }
  }
}

}  // namespace vigil::parse::training::internal
