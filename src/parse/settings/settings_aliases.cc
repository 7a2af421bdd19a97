// The alias table: every spelling of a setting we know, from the trainers'
// own argument parsers and configs (docs/job-settings.md "Aliases" lists the
// same table with the program each spelling comes from), and the JobSettings
// value type.
//
// The table is data on purpose: a new trainer's spelling is one line, and
// the doc and the tests read the same names.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/strings.h"
#include "parse/settings/settings_internal.h"

namespace vigil::parse::settings {
namespace {

using internal::Alias;
using internal::AliasKind;
using internal::Dialect;

struct Row {
  std::string_view alias;  // normalised: lower case, '_' for '-'
  Alias to;
};

constexpr Alias V(std::string_view c) { return {c, AliasKind::kValue, {}}; }
constexpr Alias F(std::string_view mode) { return {"precision", AliasKind::kPrecisionFlag, mode}; }
constexpr Alias B(std::string_view c) { return {c, AliasKind::kBool, {}}; }

// Sorted by alias (the static_asserts below check it): looked up by binary search.
constexpr Row kRows[] = {
    {"accumulate", V("gradient_accumulation_steps")},               // YOLOv3/v5 --accumulate
    {"accumulate_grad_batches", V("gradient_accumulation_steps")},  // Lightning Trainer
    {"activation_checkpointing", B("gradient_checkpointing")},
    {"activations_checkpoint_method", V("gradient_checkpointing")},  // Megatron: uniform, block
    {"amp", F("amp")},                // torchvision, timm, Ultralytics amp=True
    {"arch", V("model")},             // fairseq --arch, pytorch/examples -a/--arch
    {"architecture", V("model")},     // super-gradients
    {"b", V("batch_size")},           // timm, pytorch/examples -b
    {"base_model", V("model")},       // Axolotl
    {"batch", V("batch_size")},       // Ultralytics batch=16
    {"batch_size", V("batch_size")},  // nanoGPT, torchvision, fairseq, Lightning data
    {"batch_size_per_gpu", V("batch_size")},
    {"bf16", F("bf16")},                           // HF Trainer, Megatron, DeepSpeed bf16.enabled
    {"bf16.enabled", F("bf16")},                   // DeepSpeed config
    {"bf16_enabled", F("bf16")},                   // DeepSpeed engine dump
    {"clip_grad", V("max_grad_norm")},             // Megatron --clip-grad, timm --clip-grad
    {"clip_norm", V("max_grad_norm")},             // fairseq --clip-norm
    {"dataloader_num_workers", V("num_workers")},  // HF Trainer, diffusers
    {"dataloader_pin_memory", B("pin_memory")},    // HF Trainer
    {"distributed_world_size", V("world_size")},   // fairseq
    {"dtype", V("precision")},                     // torchtune dtype=bf16, nanoGPT dtype
    {"enable_activation_checkpointing", B("gradient_checkpointing")},  // torchtune
    {"epochs", V("epochs")},                        // Ultralytics, torchvision, timm, torchtune
    {"fp16", F("fp16")},                            // HF Trainer, Megatron, fairseq --fp16
    {"fp16.enabled", F("fp16")},                    // DeepSpeed config
    {"fp16_enabled", F("fp16")},                    // DeepSpeed engine dump
    {"global_batch_size", V("global_batch_size")},  // Megatron, NeMo
    {"grad_accum", V("gradient_accumulation_steps")},
    {"grad_clip", V("max_grad_norm")},                                  // nanoGPT
    {"gradient_accumulation_steps", V("gradient_accumulation_steps")},  // HF, DeepSpeed, nanoGPT
    {"gradient_checkpointing", B("gradient_checkpointing")},            // HF Trainer, Axolotl
    {"gradient_clip_val", V("max_grad_norm")},                          // Lightning Trainer
    {"gradient_clipping", V("max_grad_norm")},                          // DeepSpeed config
    {"j", V("num_workers")},                                            // torchvision, timm -j
    {"learning_rate", V("learning_rate")},      // HF, nanoGPT, Axolotl, Lightning models
    {"lr", V("learning_rate")},                 // torchvision, Megatron, fairseq, torchtune
    {"lr0", V("learning_rate")},                // Ultralytics initial LR
    {"lr_warmup_epochs", V("warmup_epochs")},   // torchvision
    {"lr_warmup_fraction", V("warmup_ratio")},  // Megatron
    {"lr_warmup_iters", V("warmup_steps")},     // Megatron
    {"lr_warmup_steps", V("warmup_steps")},
    {"max_data_loader_n_workers", V("num_workers")},  // kohya sd-scripts
    {"max_epoch", V("epochs")},                       // fairseq --max-epoch
    {"max_epochs", V("epochs")},                      // Lightning Trainer
    {"max_grad_norm", V("max_grad_norm")},            // HF Trainer
    {"max_iters", V("max_steps")},                    // nanoGPT
    {"max_steps", V("max_steps")},                    // HF Trainer, Lightning Trainer
    {"max_update", V("max_steps")},                   // fairseq --max-update
    {"micro_batch_size", V("batch_size")},            // Megatron, NeMo, Axolotl
    {"mixed_precision", V("precision")},              // accelerate, diffusers
    {"model", V("model")},                            // Ultralytics, torchvision --model, timm
    {"model_name", V("model")},
    {"model_name_or_path", V("model")},  // HF run_*.py, TRL, LLaMA-Factory
    {"n_epochs", V("epochs")},
    {"nnodes", V("nnodes")},                  // torchrun
    {"nproc_per_node", V("nproc_per_node")},  // torchrun, torch.distributed.launch, tune
    {"num_epochs", V("epochs")},
    {"num_gpus", V("nproc_per_node")},       // deepspeed launcher
    {"num_machines", V("nnodes")},           // accelerate
    {"num_nodes", V("nnodes")},              // deepspeed launcher, Lightning Trainer
    {"num_processes", V("nproc_per_node")},  // accelerate
    {"num_train_epochs", V("epochs")},       // HF Trainer
    {"num_warmup_steps", V("warmup_steps")},
    {"num_workers", V("num_workers")},  // fairseq, Megatron, Lightning data modules
    {"per_device_batch_size", V("batch_size")},
    {"per_device_train_batch_size", V("batch_size")},        // HF Trainer
    {"per_gpu_train_batch_size", V("batch_size")},           // HF Trainer (old)
    {"pin_mem", B("pin_memory")},                            // timm --pin-mem
    {"pin_memory", B("pin_memory")},                         // Lightning data modules, scripts
    {"precision", V("precision")},                           // Lightning --precision 16-mixed
    {"pretrained_model_name_or_path", V("model")},           // diffusers, kohya
    {"recompute_activations", B("gradient_checkpointing")},  // Megatron
    {"seed", V("seed")},
    {"seed_everything", V("seed")},                       // Lightning CLI
    {"train_batch_size", V("batch_size")},                // HF scripts; DeepSpeed: global (below)
    {"train_iters", V("max_steps")},                      // Megatron
    {"train_micro_batch_size_per_gpu", V("batch_size")},  // DeepSpeed config
    {"update_freq", V("gradient_accumulation_steps")},    // fairseq --update-freq
    {"use_amp", F("amp")},
    {"warmup_epochs", V("warmup_epochs")},    // Ultralytics, timm
    {"warmup_iters", V("warmup_steps")},      // nanoGPT, MMEngine
    {"warmup_num_steps", V("warmup_steps")},  // DeepSpeed WarmupLR scheduler
    {"warmup_ratio", V("warmup_ratio")},      // HF Trainer
    {"warmup_steps", V("warmup_steps")},      // HF Trainer, Lightning schedulers
    {"warmup_updates", V("warmup_steps")},    // fairseq
    {"workers", V("num_workers")},            // Ultralytics, torchvision, pytorch/examples
    {"world_size", V("world_size")},
    {"zero_optimization.stage", V("zero_stage")},  // DeepSpeed config
    {"zero_optimization_stage", V("zero_stage")},  // DeepSpeed engine dump
    {"zero_stage", V("zero_stage")},               // Accelerate, Megatron-DeepSpeed
};

// A launcher's options: only these are settings (its --master_port is not).
constexpr Row kLauncherRows[] = {
    {"mixed_precision", V("precision")},  // accelerate launch --mixed_precision bf16
    {"nnodes", V("nnodes")},              // torchrun
    {"nproc_per_node", V("nproc_per_node")},
    {"num_gpus", V("nproc_per_node")},       // deepspeed
    {"num_machines", V("nnodes")},           // accelerate
    {"num_nodes", V("nnodes")},              // deepspeed
    {"num_processes", V("nproc_per_node")},  // accelerate
    {"zero_stage", V("zero_stage")},         // accelerate --zero_stage
};

// In a DeepSpeed config, train_batch_size is micro batch x accumulation x
// data-parallel ranks (deepspeed.ai/docs/config-json).
constexpr Row kDeepSpeedRows[] = {
    {"train_batch_size", V("global_batch_size")},
};

constexpr bool Sorted(const Row* b, const Row* e) {
  return std::is_sorted(b, e, [](const Row& x, const Row& y) { return x.alias < y.alias; });
}
static_assert(Sorted(std::begin(kRows), std::end(kRows)), "kRows must be sorted by alias");
static_assert(Sorted(std::begin(kLauncherRows), std::end(kLauncherRows)), "kLauncherRows unsorted");

template <size_t N>
const Alias* Search(const Row (&rows)[N], std::string_view key) {
  auto it = std::lower_bound(std::begin(rows), std::end(rows), key,
                             [](const Row& r, std::string_view k) { return r.alias < k; });
  if (it == std::end(rows) || it->alias != key) return nullptr;
  return &it->to;
}

// A dotted key whose part names evaluation or testing is not the training
// setting: "val_dataloader.batch_size", "data.test.batch_size".
bool EvaluationPath(std::string_view key) {
  for (std::string_view part : Split(key, '.')) {
    for (std::string_view p : {"val", "valid", "validation", "eval", "test", "predict"}) {
      if (StartsWith(part, p)) return true;
    }
  }
  return false;
}

int SourceRank(std::string_view source) {
  if (source == "log") return 0;
  if (source == "argv") return 1;
  if (StartsWith(source, "config:")) return 2;
  return 3;
}

}  // namespace

SettingSource SourceOf(const JobSetting& s) {
  return static_cast<SettingSource>(SourceRank(s.source));
}

const std::vector<std::string_view> kCanonicalKeys = {"batch_size",
                                                      "epochs",
                                                      "global_batch_size",
                                                      "gradient_accumulation_steps",
                                                      "gradient_checkpointing",
                                                      "learning_rate",
                                                      "max_grad_norm",
                                                      "max_steps",
                                                      "model",
                                                      "nnodes",
                                                      "nproc_per_node",
                                                      "num_workers",
                                                      "pin_memory",
                                                      "precision",
                                                      "seed",
                                                      "warmup_epochs",
                                                      "warmup_ratio",
                                                      "warmup_steps",
                                                      "world_size",
                                                      "zero_stage"};

const std::vector<std::string_view> kEnvKeys = {
    "CUDA_VISIBLE_DEVICES",    "OMP_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_LAUNCH_BLOCKING",
    "TORCH_DISTRIBUTED_DEBUG", "WORLD_SIZE",      "LOCAL_WORLD_SIZE",        "MKL_NUM_THREADS"};

namespace internal {

const Alias* LookupAlias(std::string_view key, Dialect dialect) {
  if (dialect == Dialect::kLauncher) return Search(kLauncherRows, key);
  if (dialect == Dialect::kDeepSpeed) {
    if (const Alias* a = Search(kDeepSpeedRows, key)) return a;
  }
  if (const Alias* a = Search(kRows, key)) return a;
  size_t dot = key.rfind('.');
  if (dot == std::string_view::npos || EvaluationPath(key)) return nullptr;
  // The whole dotted key first (zero_optimization.stage, fp16.enabled),
  // then a two-part tail (optimizer.params.lr has none), then the leaf.
  size_t prev = key.rfind('.', dot - 1);
  if (prev != std::string_view::npos && dot > 0) {
    if (const Alias* a = Search(kRows, key.substr(prev + 1))) return a;
  }
  std::string_view leaf = key.substr(dot + 1);
  const Alias* a = Search(kRows, leaf);
  // A nested "model" is some part's own (NeMo's model.tokenizer.model is a
  // tokenizer file), not the job's model.
  if (a != nullptr && a->canonical == "model" &&
      (leaf == "model" || key.find("tokenizer") != std::string_view::npos)) {
    return nullptr;
  }
  return a;
}

std::string NormaliseKey(std::string_view raw) {
  while (!raw.empty() && (raw.front() == '-' || raw.front() == '+' || raw.front() == '~')) {
    raw.remove_prefix(1);
  }
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (c == '-') c = '_';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.push_back(c);
  }
  return out;
}

bool IsUnset(std::string_view v) {
  v = TrimSpace(v);
  if (v.empty()) return true;
  for (std::string_view u : {"None", "none", "null", "Null", "NULL", "~", "''", "\"\""}) {
    if (v == u) return true;
  }
  return false;
}

std::optional<bool> ParseBool(std::string_view v) {
  v = TrimSpace(v);
  for (std::string_view t : {"true", "True", "TRUE", "1", "yes", "Yes", "on"}) {
    if (v == t) return true;
  }
  for (std::string_view f : {"false", "False", "FALSE", "0", "no", "No", "off"}) {
    if (v == f) return false;
  }
  return std::nullopt;
}

std::string_view Unquote(std::string_view v) {
  v = TrimSpace(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

bool AddSetting(std::string_view raw_key, std::string_view value, bool value_given,
                std::string_view source, Dialect dialect, const JobSettingsLimits& limits,
                JobSettings* out, std::string_view launcher) {
  std::string key = NormaliseKey(raw_key);
  // -b and -j are batch size and workers only as short options.
  if (key.size() == 1 && !(raw_key.size() == 2 && raw_key[0] == '-')) return false;
  const Alias* alias = LookupAlias(key, dialect);
  if (alias == nullptr) return false;
  value = Unquote(value);
  JobSetting s;
  s.key = std::string(alias->canonical);
  s.source = std::string(source);
  s.raw_key = std::string(CutUtf8(raw_key, limits.max_value_bytes));
  s.launcher = std::string(launcher);
  switch (alias->kind) {
    case AliasKind::kPrecisionFlag: {
      std::optional<bool> on = value_given ? ParseBool(value) : std::optional<bool>(true);
      if (!on.has_value() || !*on) return false;  // --fp16 False, fp16.enabled: auto
      s.value = std::string(alias->mode);
      break;
    }
    case AliasKind::kBool: {
      std::optional<bool> on = value_given ? ParseBool(value) : std::optional<bool>(true);
      if (!on.has_value()) {
        if (IsUnset(value)) return false;
        s.value = std::string(CutUtf8(value, limits.max_value_bytes));
        break;
      }
      s.value = value_given ? std::string(value) : "true";
      s.number = *on ? 1.0 : 0.0;
      break;
    }
    case AliasKind::kValue: {
      if (!value_given || IsUnset(value)) return false;
      s.value = std::string(CutUtf8(value, limits.max_value_bytes));
      std::optional<double> n = ParseDouble(s.value);
      if (n.has_value() && std::isfinite(*n)) s.number = n;
      break;
    }
  }
  out->Add(std::move(s), limits.max_settings);
  return true;
}

}  // namespace internal

void JobSettings::Add(JobSetting s, size_t max_settings) {
  std::string id;
  for (const std::string* part : {&s.key, &s.value, &s.source, &s.raw_key, &s.launcher}) {
    id += *part;
    id += '\0';
  }
  if (seen_.count(id) > 0) return;
  if (all_.size() >= max_settings) {
    if (!full_) AddNote("more than " + std::to_string(max_settings) + " settings; kept the first");
    full_ = true;
    return;
  }
  seen_.insert(std::move(id));
  all_.push_back(std::move(s));
}

void JobSettings::AddNote(std::string note) {
  if (notes_.size() < 64) notes_.push_back(std::move(note));
}

void JobSettings::Finish() {
  std::stable_sort(all_.begin(), all_.end(), [](const JobSetting& a, const JobSetting& b) {
    if (a.key != b.key) return a.key < b.key;
    return SourceRank(a.source) < SourceRank(b.source);
  });
}

void JobSettings::Merge(const JobSettings& other, size_t max_settings) {
  for (const JobSetting& s : other.all_) Add(s, max_settings);
  for (const std::string& n : other.notes_) AddNote(n);
}

const JobSetting* JobSettings::Find(std::string_view key) const {
  const JobSetting* best = nullptr;
  for (const JobSetting& s : all_) {
    if (s.key != key) continue;
    if (best == nullptr || SourceRank(s.source) < SourceRank(best->source)) best = &s;
  }
  return best;
}

std::vector<const JobSetting*> JobSettings::FindAll(std::string_view key) const {
  std::vector<const JobSetting*> out;
  for (const JobSetting& s : all_) {
    if (s.key == key) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(), [](const JobSetting* a, const JobSetting* b) {
    return SourceRank(a->source) < SourceRank(b->source);
  });
  return out;
}

std::optional<double> JobSettings::Number(std::string_view key) const {
  const JobSetting* s = Find(key);
  return s == nullptr ? std::nullopt : s->number;
}

}  // namespace vigil::parse::settings
