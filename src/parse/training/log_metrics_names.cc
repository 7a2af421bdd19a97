// Key names, the vocabulary every family of forms shares: a key's canonical
// name ("lr", "learning rate" -> learning_rate), the keys that never name a
// metric (a rank, a port, an ETA), the words that make a key in no known
// format look like a metric's, and the extractor's memo of what it worked
// out about the keys it saw lately. Separate from the scanners because it
// says what a key means, not where one is written.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include "parse/training/log_metrics_internal.h"

namespace vigil::parse::training::internal {
namespace {

// Keys whose number is an identity or a setting, never a training metric:
// a PID, a rank, a port, Lightning's experiment version, an ETA.
bool BlockedKey(std::string_view lower) {
  static constexpr std::string_view kBlocked[] = {"eta",       "v_num",       "pid",
                                                  "rank",      "local_rank",  "global_rank",
                                                  "node_rank", "world_size",  "local_world_size",
                                                  "port",      "master_port", "seed",
                                                  "version",   "gpu",         "gpu_id",
                                                  "device",    "device_id",   "cuda",
                                                  "id",        "job_id",      "tid",
                                                  "year",      "date",        "num_workers"};
  for (std::string_view b : kBlocked) {
    if (lower == b) return true;
  }
  return false;
}

// A rate of training work: "train_samples_per_second", "img/s",
// "global_step/sec"; not libFuzzer's "exec/s".
bool ThroughputKey(std::string_view lower) {
  size_t per = lower.rfind("/s");
  if (per == std::string_view::npos || (lower.substr(per) != "/s" && lower.substr(per) != "/sec")) {
    per = lower.rfind("_per_sec");
  }
  if (per == std::string_view::npos) return false;
  size_t b = per;
  while (b > 0 && IsAlpha(lower[b - 1])) --b;
  static constexpr std::string_view kUnits[] = {
      "sample", "samples", "token",   "tokens",    "tok",   "toks",    "img",   "imgs",
      "image",  "images",  "example", "examples",  "it",    "iter",    "iters", "step",
      "steps",  "seq",     "seqs",    "sequences", "batch", "batches", "frames"};
  std::string_view unit = lower.substr(b, per - b);
  for (std::string_view u : kUnits) {
    if (unit == u) return true;
  }
  return false;
}

// A key a metric line would carry; gates lines that are not in a known
// format so prose and config dumps with numbers give nothing. Matches whole
// words of the key ("val_acc", "base_lr", "bbox_mAP_50"), not parts of
// words ("accumulation", "already").
bool MetricLookingKey(std::string_view lower, std::string_view written) {
  static constexpr std::string_view kWords[] = {
      "loss",       "acc",   "accuracy", "ppl", "perplexity", "mfu",       "reward", "f1",
      "bleu",       "rouge", "map",      "auc", "lr",         "learning",  "norm",   "gnorm",
      "throughput", "wer",   "cer",      "kl",  "entropy",    "precision", "recall"};
  if (ThroughputKey(lower)) return true;
  auto metric_word = [&](std::string_view word) {
    if (word.substr(0, 4) == "loss") return true;  // "lossD", "losses"
    if (word == "map") {                           // mAP, not a config's "map_location"
      return written.substr(static_cast<size_t>(word.data() - lower.data()), 3) != "map";
    }
    for (std::string_view w : kWords) {
      if (word == w) return true;
    }
    return false;
  };
  for (size_t i = 0; i < lower.size();) {
    while (i < lower.size() && !IsAlpha(lower[i]) && !IsDigit(lower[i])) ++i;
    size_t b = i;
    while (i < lower.size() && IsAlpha(lower[i])) ++i;
    size_t letters = i;
    while (i < lower.size() && (IsAlpha(lower[i]) || IsDigit(lower[i]))) ++i;
    // "f1", "top1" whole; "map50" by its letters.
    if (i > b &&
        (metric_word(lower.substr(b, i - b)) || metric_word(lower.substr(b, letters - b)))) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool LowerKey(std::string_view key, char (&buf)[kMaxNameLen], std::string_view* lower) {
  if (key.size() > kMaxNameLen) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = Lower(key[i]);
    buf[i] = c == ' ' || c == '-' ? '_' : c;
  }
  *lower = std::string_view(buf, key.size());
  return true;
}

namespace {

struct Alias {
  std::string_view from, to;
};

// Keys that are the metric itself, as trainers spell it.
constexpr Alias kAliases[] = {
    {"loss", "loss"},
    {"lr", "learning_rate"},
    {"learning_rate", "learning_rate"},
    {"learningrate", "learning_rate"},
    {"grad_norm", "grad_norm"},
    {"gradient_norm", "grad_norm"},
    {"gradnorm", "grad_norm"},
    {"gnorm", "grad_norm"},       // fairseq
    {"total_norm", "grad_norm"},  // torch.nn.utils.clip_grad_norm_'s name for it
    {"samples_per_second", "samples_per_second"},
    {"samples_per_sec", "samples_per_second"},
    {"samples/s", "samples_per_second"},
    {"samples/sec", "samples_per_second"},
    {"samples/second", "samples_per_second"},
    {"sample/s", "samples_per_second"},
    {"currsamplespersec", "samples_per_second"},
    {"tokens_per_second", "tokens_per_second"},
    {"tokens_per_sec", "tokens_per_second"},
    {"tok/s", "tokens_per_second"},
    {"tok/sec", "tokens_per_second"},
    {"tokens/s", "tokens_per_second"},
    {"tokens/sec", "tokens_per_second"},
    {"token/s", "tokens_per_second"},
    {"iterations_per_second", "iterations_per_second"},
    {"it/s", "iterations_per_second"},
    {"iter/s", "iterations_per_second"},
    {"iters/s", "iterations_per_second"},
    {"iterations/s", "iterations_per_second"},
    {"step", "step"},
    {"global_step", "step"},
    {"iter", "step"},
    {"iteration", "step"},
    {"num_updates", "step"},  // fairseq
    {"epoch", "epoch"},
};

// Other names of the training loss and the learning rate: the whole loss
// of a multi-part objective (detectron2's total_loss, Megatron's "lm loss",
// LLaMA2-Accessory's causal-LM "closs", DLLogger's step_loss), the rate in
// force now (BigDL's "current learning rate"). They rank below the plain
// names: a line with both "loss" and "total_loss" reports "loss".
constexpr Alias kSecondNames[] = {
    {"total_loss", "loss"},
    {"tot_loss", "loss"},
    {"lm_loss", "loss"},
    {"closs", "loss"},
    {"step_loss", "loss"},
    {"lossvalue", "loss"},  // insightface's MXNet Speedometer: "acc=0.01\tlossvalue=41.97"
    {"loss_total", "loss"},
    {"global_grad_norm", "grad_norm"},
    {"grad_norm_total", "grad_norm"},
    {"lr_0", "learning_rate"},        // the first parameter group's (ESPnet)
    {"optim0_lr0", "learning_rate"},  // the first optimizer's first group (ESPnet2)
    {"crossentropyloss", "loss"},     // OLMo's train/CrossEntropyLoss: the LM objective
    {"cross_entropy_loss", "loss"},
    {"total_grad_norm", "grad_norm"},
};

// Names a trainer gives its loss or its rate that are too common a word to
// take qualifiers: Marian's "Cost" and "L.r.", FastPitch's and Nematus'
// "lrate". Only the whole key counts: PaddleOCR's "batch_cost" is a time,
// not a batch's loss.
constexpr Alias kBareNames[] = {
    {"cost", "loss"},
    {"l.r.", "learning_rate"},
    {"lrate", "learning_rate"},
};

// Words before a name that qualify it as the training one or the current
// value ("train_loss", "train/lr", "Train Loss", "current learning rate",
// NeMo's "reduced_train_loss", ESPnet's reporter "main/loss", XLM's "model
// LR"); a name that needs them ranks below the
// bare name, and one that needs two below that. The unit a loop logs its
// loss over qualifies it too: "Batch loss", "Iteration loss", "epoch_loss",
// a "running loss" or "Mean loss" (an average of the training loss so far).
// Phases other than training (val_, eval_, test_) are not here: their loss
// is not the training loss.
constexpr std::string_view kQualifiers[] = {
    "train", "training", "current", "cur",       "curr", "reduced", "avg",  "average",
    "main",  "model",    "batch",   "iteration", "iter", "epoch",   "mean", "running"};

std::string_view AliasOf(std::string_view k, const Alias* begin, const Alias* end) {
  for (const Alias* a = begin; a != end; ++a) {
    // The first byte first: a call to memcmp per alias showed in profiles.
    if (k.size() == a->from.size() && !k.empty() && k[0] == a->from[0] && k == a->from) {
      return a->to;
    }
  }
  return {};
}

// `k` without one leading qualifier and its separator ('_', '/', '.'), or
// empty when it starts with none.
std::string_view WithoutQualifier(std::string_view k) {
  for (std::string_view q : kQualifiers) {
    if (k.size() > q.size() + 1 && k.substr(0, q.size()) == q &&
        (k[q.size()] == '_' || k[q.size()] == '/' || k[q.size()] == '.')) {
      return k.substr(q.size() + 1);
    }
  }
  return {};
}

// `k` without its first path segment when it names a group of metrics
// rather than a phase: "optim/total_grad_norm" (OLMo), "actor/lr" (verl),
// "trainer/loss"; never "val/loss", "eval/loss", "test/loss": their loss is
// not the training loss.
std::string_view WithoutPathGroup(std::string_view k) {
  size_t slash = k.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash > 16 || slash + 1 >= k.size()) {
    return {};
  }
  std::string_view group = k.substr(0, slash);
  for (char c : group) {
    if (c < 'a' || c > 'z') return {};
  }
  for (std::string_view phase :
       {"val", "valid", "validation", "eval", "evaluation", "test", "dev"}) {
    if (group == phase) return {};
  }
  return k.substr(slash + 1);
}

}  // namespace

namespace {

bool TrainingMetric(std::string_view n) {
  return n == "loss" || n == "learning_rate" || n == "grad_norm";
}

// A name after up to `depth` qualifiers before or after it; *rank counts
// them (see CanonicalOfLower).
std::string_view Qualified(std::string_view k, int depth, uint8_t* rank) {
  std::string_view name = AliasOf(k, std::begin(kAliases), std::end(kAliases));
  if (!name.empty()) return *rank = 0, name;
  name = AliasOf(k, std::begin(kSecondNames), std::end(kSecondNames));
  if (!name.empty()) return *rank = 1, name;
  if (depth == 0) return {};
  // Qualified: only the three training metrics, never a step or a rate
  // ("train_step" is not the step counter of the run).
  std::string_view rest = WithoutQualifier(k);
  if (rest.empty()) rest = WithoutPathGroup(k);
  if (!rest.empty()) {
    name = Qualified(rest, depth - 1, rank);
    if (TrainingMetric(name))
      return *rank = static_cast<uint8_t>(std::max<int>(*rank, 1) + 1), name;
  }
  // After the name: "loss train" (litgpt), "loss/train" (TensorBoard tags),
  // "loss_avg" (an epoch's average, PaddleVideo).
  // "loss train (curr)" (litgpt: the current value, not an average).
  for (std::string_view suffix : {"_train", "/train", ".train", "_training", "/training", "_avg",
                                  "_curr", "_cur", "_current"}) {
    if (k.size() > suffix.size() && k.substr(k.size() - suffix.size()) == suffix) {
      name = Qualified(k.substr(0, k.size() - suffix.size()), depth - 1, rank);
      if (TrainingMetric(name)) {
        return *rank = static_cast<uint8_t>(std::max<int>(*rank, 1) + 1), name;
      }
    }
  }
  return {};
}

}  // namespace

std::string_view CanonicalOfLower(std::string_view k, uint8_t* rank) {
  *rank = 0;
  std::string_view name = Qualified(k, 2, rank);
  if (name.empty()) {
    name = AliasOf(k, std::begin(kBareNames), std::end(kBareNames));
    *rank = 1;  // below the plain names: "loss" beats "cost" on one line
  }
  if (name.empty()) *rank = 0;
  *rank = std::min<uint8_t>(*rank, 3);  // two bits in the key memo
  return name;
}

std::string_view CanonicalOfLower(std::string_view k) {
  uint8_t rank;
  return CanonicalOfLower(k, &rank);
}

namespace {

// What a key as written says: its canonical name, whether it is never a
// metric's (blocked or too long) and whether it looks like one.
struct KeyFacts {
  std::string_view canonical;  // empty: none
  bool step = false;           // canonical is "step"
  bool rejected = false;
  bool metric_looking = false;
  uint8_t rank = 0;  // 0: the plain name; higher: a second name (CanonicalOfLower)
};

KeyFacts WorkOutKey(std::string_view written) {
  char buf[kMaxNameLen];
  std::string_view lower;
  KeyFacts facts;
  if (!LowerKey(written, buf, &lower) || BlockedKey(lower)) {
    facts.rejected = true;
    return facts;
  }
  facts.canonical = CanonicalOfLower(lower, &facts.rank);
  facts.metric_looking = !facts.canonical.empty() || MetricLookingKey(lower, written);
  facts.step = facts.canonical == "step";
  return facts;
}

// The facts of the keys seen lately, kept by the extractor
// (LogMetricExtractor::key_memo_, a KeyMemoSlots): a job writes the same few
// keys on every line, and working them out again was most of the cost of a
// pair. Four-way set-associative by a hash of the key, so that a few keys
// that hash alike do not evict each other on every line (a new key takes a
// free way, else the last); a slot holds the key and its facts packed in a
// byte. Only the bytes of the key decide its facts.
constexpr size_t kKeyMemoSetBits = 4;  // 16 sets
constexpr size_t kKeyMemoWays = 4;
constexpr std::string_view kCanonicalNames[] = {"",
                                                "loss",
                                                "learning_rate",
                                                "grad_norm",
                                                "samples_per_second",
                                                "tokens_per_second",
                                                "iterations_per_second",
                                                "step",
                                                "epoch"};
constexpr uint8_t kStepIndex = 7;
static_assert(kCanonicalNames[kStepIndex] == "step");
constexpr uint8_t kRejectedBit = 0x10, kMetricLookingBit = 0x20, kCanonicalMask = 0x0f;
constexpr unsigned kRankShift = 6;  // two bits: ranks 0..3

size_t KeyMemoSet(std::string_view key) {
  uint64_t head = 0, tail = 0;
  if (key.size() >= 8) {  // the first and last eight bytes
    std::memcpy(&head, key.data(), 8);
    std::memcpy(&tail, key.data() + key.size() - 8, 8);
  } else if (key.size() >= 4) {  // the first and last four
    uint32_t first, last;
    std::memcpy(&first, key.data(), 4);
    std::memcpy(&last, key.data() + key.size() - 4, 4);
    head = first;
    tail = last;
  } else {
    for (char c : key) head = head << 8 | static_cast<uint8_t>(c);
  }
  uint64_t h = (head * 0x9e3779b97f4a7c15u) ^ ((tail + key.size()) * 0xc2b2ae3d27d4eb4fu);
  return static_cast<size_t>((h ^ (h >> 29)) * 0x9e3779b97f4a7c15u >> (64 - kKeyMemoSetBits));
}

// a == b for keys: most are 4 to 16 bytes, compared in two overlapping
// loads each rather than by a call to memcmp.
bool SameKey(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  if (n >= 8 && n <= 16) {
    uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), 8);
    std::memcpy(&a1, a.data() + n - 8, 8);
    std::memcpy(&b0, b.data(), 8);
    std::memcpy(&b1, b.data() + n - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n >= 4 && n < 8) {
    uint32_t a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), 4);
    std::memcpy(&a1, a.data() + n - 4, 4);
    std::memcpy(&b0, b.data(), 4);
    std::memcpy(&b1, b.data() + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  return a == b;
}

KeyFacts KeyFactsOf(std::string_view written, KeyMemoSlots* memo) {
  if (written.empty()) return WorkOutKey(written);
  if (memo->empty()) memo->resize(kKeyMemoWays << kKeyMemoSetBits);
  auto* set = &(*memo)[kKeyMemoWays * KeyMemoSet(written)];
  size_t way = 0;
  while (way < kKeyMemoWays && !SameKey(set[way].first, written)) ++way;
  if (way == kKeyMemoWays) {  // not there: work it out and keep it
    KeyFacts facts = WorkOutKey(written);
    size_t index = 0;
    while (index < std::size(kCanonicalNames) && kCanonicalNames[index] != facts.canonical) {
      ++index;
    }
    if (index == std::size(kCanonicalNames)) return facts;  // not a name above: not kept
    way = 0;
    while (way < kKeyMemoWays - 1 && !set[way].first.empty()) ++way;
    set[way].first.assign(written);
    set[way].second = static_cast<uint8_t>(index | (facts.rank << kRankShift) |
                                           (facts.rejected ? kRejectedBit : 0) |
                                           (facts.metric_looking ? kMetricLookingBit : 0));
  }
  uint8_t packed = set[way].second;
  KeyFacts facts;
  facts.canonical = kCanonicalNames[packed & kCanonicalMask];
  facts.step = (packed & kCanonicalMask) == kStepIndex;
  facts.rejected = packed & kRejectedBit;
  facts.metric_looking = packed & kMetricLookingBit;
  facts.rank = static_cast<uint8_t>(packed >> kRankShift);
  return facts;
}

}  // namespace

bool SegmentParser::AddKeyed(size_t pos, const Key& key, double value, Source source) {
  std::string_view written =
      (key.in_line ? s_ : std::string_view(*arena_)).substr(key.off, key.len);
  KeyFacts facts = KeyFactsOf(written, key_memo_);
  if (facts.rejected) return false;
  std::string_view canonical = facts.canonical;
  bool is_step = facts.step;
  if (is_step && !(std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15)) {
    return false;  // DeepSpeed's "step: 5.67" is a time in ms
  }
  Candidate* c = Add(pos, canonical, value, source);
  if (c == nullptr) return false;
  c->is_step = is_step;
  c->multi_word = key.multi_word && canonical.empty();
  c->metric_looking = facts.metric_looking;
  c->alias_rank = facts.rank;
  c->name_off = key.off;
  c->name_len = key.len;
  c->name_in_line = key.in_line;
  return true;
}

void AppendNormalized(std::string* out, size_t start, std::string_view words, bool unit) {
  // Written in place after growing the string once (this runs for every
  // key): the result is never longer than `words`, as each '_' stands for at
  // least one byte dropped.
  size_t size = out->size();
  out->resize(size + words.size());
  char* base = out->data();
  char* p = base + size;
  bool gap = false;
  for (char c : words) {
    bool keep = IsWordChar(c) || static_cast<unsigned char>(c) >= 0x80 ||
                (!unit && (c == '.' || c == '/' || c == '-'));
    if (!keep) {
      gap = true;
      continue;
    }
    if (gap && p > base + start && p[-1] != '_') *p++ = '_';
    *p++ = c;
    gap = false;
  }
  out->resize(static_cast<size_t>(p - base));
}

}  // namespace vigil::parse::training::internal
