#include "parse/training/log_events.h"

#include <algorithm>
#include <utility>

#include "core/json_writer.h"
#include "core/strings.h"
#include "parse/logs/level.h"
#include "parse/logs/multiline.h"
#include "parse/training/xid.h"

namespace vigil::parse::training {
namespace {

constexpr int64_t kRepeatWindowLines = LogEventDetector::kRepeatWindowLines;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool Has(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Case-insensitive find of a lower-case needle.
size_t FindNoCase(std::string_view s, std::string_view lower_needle) {
  if (lower_needle.empty() || s.size() < lower_needle.size()) return std::string_view::npos;
  for (size_t i = 0; i + lower_needle.size() <= s.size(); ++i) {
    size_t k = 0;
    while (k < lower_needle.size() && Lower(s[i + k]) == lower_needle[k]) ++k;
    if (k == lower_needle.size()) return i;
  }
  return std::string_view::npos;
}

// The decimal number right after `key` in `s` ("SeqNum=" -> 1234), if any.
std::optional<int64_t> NumberAfter(std::string_view s, std::string_view key) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  s.remove_prefix(at + key.size());
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  size_t n = 0;
  int64_t v = 0;
  while (n < s.size() && n < 18 && IsDigit(s[n])) v = v * 10 + (s[n++] - '0');
  if (n == 0) return std::nullopt;
  return neg ? -v : v;
}

// The text after `key` up to the first of `stops` (or the end).
std::string_view TextAfter(std::string_view s, std::string_view key, std::string_view stops) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return {};
  s.remove_prefix(at + key.size());
  size_t end = s.find_first_of(stops);
  return end == std::string_view::npos ? s : s.substr(0, end);
}

// A decimal number with an optional fraction at the front of `s`
// ("32768.0, ..." -> "32768.0"), or "".
std::string_view LeadingNumber(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  if (n == 0) return {};
  if (n + 1 < s.size() && s[n] == '.' && IsDigit(s[n + 1])) {
    ++n;
    while (n < s.size() && IsDigit(s[n])) ++n;
  }
  return s.substr(0, n);
}

// "RuntimeError: msg" -> name "RuntimeError", message "msg". `strict`: only
// names a reader takes for an exception (…Error, …Exception,
// KeyboardInterrupt, …Warning, SystemExit), so "loss: 0.5" is not; after a
// traceback's frames any class name is (StopIteration, torch._dynamo.exc.Unsupported).
bool SplitException(std::string_view line, std::string_view* name, std::string_view* message,
                    bool strict = true) {
  size_t i = 0;
  while (i < line.size() &&
         (IsAlpha(line[i]) || IsDigit(line[i]) || line[i] == '_' || line[i] == '.')) {
    ++i;
  }
  if (i == 0 || !(IsAlpha(line[0]) || line[0] == '_')) return false;
  std::string_view n = line.substr(0, i);
  // TensorFlow 1: "ResourceExhaustedError (see above for traceback): OOM ...".
  constexpr std::string_view kSeeAbove = " (see above for traceback)";
  if (line.substr(i, kSeeAbove.size()) == kSeeAbove) i += kSeeAbove.size();
  if (i < line.size() && line[i] != ':') return false;
  auto exception_name = [](std::string_view x) {
    return x.ends_with("Error") || x.ends_with("Exception") || x.ends_with("Interrupt") ||
           x.ends_with("Warning") || x.ends_with("Exit");
  };
  std::string_view rest = i < line.size() ? Trim(line.substr(i + 1)) : std::string_view{};
  if (strict && !exception_name(n)) {
    // A wrapper that names the exception it carries: JAX's
    // "jax._src.traceback_util.UnfilteredStackTrace: jaxlib.xla_extension.
    // XlaRuntimeError: UNKNOWN: ...". The carried one is the exception.
    std::string_view inner, inner_message;
    if (n.find('.') == std::string_view::npos || rest.empty() ||
        !SplitException(rest, &inner, &inner_message, /*strict=*/true)) {
      return false;
    }
    *name = inner;
    *message = inner_message;
    return true;
  }
  *name = n;
  *message = rest;
  return true;
}

// One physical line of a record, its worker prefix ("[rank0]: ") removed.
}  // namespace

namespace internal {
struct Line {
  int64_t number;
  std::string_view body;
  bool searched;  // false for traceback frames and C++ backtraces
};
}  // namespace internal

namespace {

using internal::Line;

std::vector<Line> SplitRecord(std::string_view record, int64_t first_line) {
  // Frames without their header: a post that begins mid-traceback.
  const bool traceback = Has(record, "Traceback (most recent call last)") || Has(record, "File \"");
  std::vector<Line> lines;
  int64_t number = first_line;
  while (true) {
    size_t nl = record.find('\n');
    std::string_view line = record.substr(0, nl);
    line.remove_prefix(parse::logs::WorkerPrefixLen(line));
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Inside a traceback the indented lines are source code, which may well
    // say "out of memory"; only the exception lines speak for the failure.
    bool searched = !(traceback && !line.empty() && (line[0] == ' ' || line[0] == '\t')) &&
                    !line.starts_with("frame #") && !line.starts_with("Exception raised from ");
    lines.push_back({number, line, searched});
    if (nl == std::string_view::npos) break;
    record.remove_prefix(nl + 1);
    ++number;
  }
  return lines;
}

// The first searched line holding any of `needles`, or nullptr.
const Line* FindLine(const std::vector<Line>& lines,
                     std::initializer_list<std::string_view> needles) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    for (std::string_view n : needles) {
      if (Has(l.body, n)) return &l;
    }
  }
  return nullptr;
}

Event MakeEvent(EventKind kind, const Line& line) {
  Event ev;
  ev.kind = kind;
  ev.line = line.number;
  return ev;
}

// "exception" and "message" from an exception line, else "message" = the
// line itself.
void AddMessage(Event* ev, std::string_view body) {
  std::string_view name, message;
  std::string_view text = Trim(body);
  // "  what():  CUDA error: ..." (std::terminate's report) says the message.
  if (text.starts_with("what():")) text = Trim(text.substr(7));
  // A Python warning: "/path/file.py:138: UserWarning: message".
  if (size_t py = text.find(".py:"); py != std::string_view::npos) {
    std::string_view rest = text.substr(py + 4);
    size_t d = 0;
    while (d < rest.size() && IsDigit(rest[d])) ++d;
    if (d > 0 && rest.substr(d).starts_with(": ")) text = rest.substr(d + 2);
  }
  if (SplitException(text, &name, &message)) {
    ev->AddString("exception", name);
    if (!message.empty()) ev->AddString("message", message);
    return;
  }
  ev->AddString("message", text);
}

// The pid a line names: "(pid: 123)", "received by PID 123", "(pid 123)".
std::optional<int64_t> PidIn(std::string_view s) {
  for (std::string_view key : {"(pid: ", "received by PID ", "(pid ", "(pid(s) ", "pid="}) {
    if (auto v = NumberAfter(s, key)) return v;
  }
  return std::nullopt;
}

// torchrun's failure summary: "exitcode  : -9 (pid: 1234)".
std::optional<int64_t> TorchrunExitCode(std::string_view s) {
  size_t at = s.find("exitcode");
  if (at == std::string_view::npos) return std::nullopt;
  s = Trim(s.substr(at + 8));
  if (!s.starts_with(":")) return std::nullopt;
  return NumberAfter(Trim(s.substr(1)), "");
}

// Phrases that every rule below needs one of; a record with none of them is
// rejected without being split into lines.
// clang-format off
constexpr std::string_view kAnchors[] = {
    "NVRM: Xid", "oom-kill:", "Killed", "SIGKILL", "Watchdog caught", "Assertion `",
    "device-side assert", "no kernel image", "not compatible with", "too old", "is insufficient",
    "out of memory", "OutOfMemoryError", "OOM when", "RESOURCE_EXHAUSTED", "ExhaustedError",
    "DataLoader worker", "shared memory (shm)", "NCCL", "nccl", "CUDA error", "CUDA_ERROR_",
    "CUBLAS_STATUS_", "CUDNN_STATUS_", "cuDNN error", "illegal memory access",
    "unspecified launch failure", "oss is ", "infinite or NaN", "verflow", "OVERFLOW",
    "egmentation fault", "SIGSEGV", "segfault at ", "exitcode", "omplete", "inished", "raining done",
    "stopped:", "oom-killer", "watchdog got stuck", "Heartbeat monitor", "cuda runtime error",
    "train metrics", "Kill process", "oom-kill event", "Out Of Memory", "skipped=",
    "skipped iterations:", "Training time", "Cuda failure", "ut of memory", "skip_batches=",
    "Traceback (most recent call last)", "File \"", "nan loss", "NaN loss", "Nan loss",
    "raining time", "nd of training",
};
// clang-format on

bool MayHaveEvent(std::string_view record) {
  for (std::string_view a : kAnchors) {
    if (Has(record, a)) return true;
  }
  return false;
}

// ---- one rule per kind, most specific first ----

std::optional<Event> XidRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    auto x = ParseXidLine(l.body);
    if (!x) continue;
    Event ev = MakeEvent(EventKind::kXid, l);
    const XidInfo& info = DescribeXid(x->code);
    ev.AddNumber("xid", x->code);
    if (!x->pci.empty()) ev.AddString("pci", x->pci);
    if (x->pid) ev.AddNumber("pid", *x->pid);
    if (!x->process.empty()) ev.AddString("process", x->process);
    if (!x->message.empty()) ev.AddString("message", x->message);
    ev.AddString("meaning", info.meaning_en);
    ev.AddString("action", info.action_en);
    return ev;
  }
  return std::nullopt;
}

// The kernel's OOM killer: "oom-kill:...,task=python,pid=1234,uid=0" and
// "Out of memory: Killed process 1234 (python) total-vm:...".
std::optional<Event> KernelOomRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (size_t at = l.body.find("oom-kill:"); at != std::string_view::npos) {
      std::string_view s = l.body.substr(at);
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      if (auto pid = NumberAfter(s, ",pid=")) ev.AddNumber("pid", *pid);
      std::string_view task = TextAfter(s, ",task=", ",");
      if (!task.empty()) ev.AddString("process", task);
      return ev;
    }
    // "Killed process N (name) total-vm:..." is printed by the OOM killer
    // only; older kernels print "Out of memory: Kill process N (name) score
    // S or sacrifice child" first, memory cgroups "Memory cgroup out of
    // memory: Kill process ...".
    size_t at = l.body.find("Killed process ");
    if (at == std::string_view::npos || FindNoCase(l.body, "out of memory") > at) {
      if (!Has(l.body, "total-vm:")) at = std::string_view::npos;
    }
    if (at == std::string_view::npos) {
      size_t kill = l.body.find("Kill process ");
      if (kill != std::string_view::npos && FindNoCase(l.body, "out of memory") < kill) at = kill;
    }
    if (at != std::string_view::npos) {
      std::string_view s = l.body.substr(at);
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      auto pid = NumberAfter(s, "Killed process ");
      if (!pid) pid = NumberAfter(s, "Kill process ");
      if (pid) ev.AddNumber("pid", *pid);
      std::string_view name = TextAfter(s, " (", ")");
      if (!name.empty()) ev.AddString("process", name);
      return ev;
    }
    // "python invoked oom-killer: gfp_mask=...": the process whose
    // allocation woke the killer (the victim is named further on, if the
    // log has it); Slurm's "Detected 1 oom-kill event(s) in step 3495064.0
    // cgroup" and srun's "task 4: Out Of Memory".
    if (size_t inv = l.body.find(" invoked oom-killer"); inv != std::string_view::npos) {
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      size_t b = inv;
      while (b > 0 && l.body[b - 1] != ' ' && l.body[b - 1] != ']') --b;
      if (b < inv) ev.AddString("invoked_by", l.body.substr(b, inv - b));
      return ev;
    }
    if (Has(l.body, "oom-kill event") ||
        (Has(l.body, "srun: error:") && Has(l.body, "Out Of Memory"))) {
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      ev.AddString("message", Trim(l.body));
      return ev;
    }
  }
  return std::nullopt;
}

std::optional<Event> NcclTimeoutRule(const std::vector<Line>& lines) {
  // Newer PyTorch also reports a hang of the watchdog itself ("watchdog got
  // stuck for 480 seconds without making progress") and its heartbeat
  // monitor's ("Heartbeat monitor timed out!"): collectives that never end.
  // PyTorch 2.3+ names the timed-out work itself: "[PG 1 Rank 11] Timeout
  // at NCCL work: 15734, last enqueued NCCL work: 15735, ...".
  const Line* l =
      FindLine(lines, {"Watchdog caught collective operation timeout", "watchdog got stuck for ",
                       "Heartbeat monitor timed out", "Timeout at NCCL work: "});
  if (!l) return std::nullopt;
  std::string_view s = l->body;
  Event ev = MakeEvent(EventKind::kNcclTimeout, *l);
  // The rank is the last "Rank N]" before the watchdog's words.
  size_t words = s.find("Watchdog caught");
  if (words == std::string_view::npos) words = s.find("watchdog got stuck");
  if (words == std::string_view::npos) words = s.find("Heartbeat monitor");
  if (words == std::string_view::npos) words = s.find("Timeout at NCCL work");
  std::string_view head = s.substr(0, words);
  if (size_t r = head.rfind("Rank "); r != std::string_view::npos) {
    if (auto rank = NumberAfter(head.substr(r), "Rank ")) ev.AddNumber("rank", *rank);
  }
  std::string_view op = TextAfter(s, "OpType=", ",)");
  if (!op.empty()) ev.AddString("op", op);
  if (auto seq = NumberAfter(s, "SeqNum=")) {
    ev.AddNumber("seq", *seq);
  } else if (auto work = NumberAfter(s, "Timeout at NCCL work: ")) {
    ev.AddNumber("seq", *work);
  }
  if (auto t = NumberAfter(s, "Timeout(ms)=")) ev.AddNumber("timeout_ms", *t);
  if (auto ran = NumberAfter(s, "ran for ")) ev.AddNumber("ran_ms", *ran);
  if (auto stuck = NumberAfter(s, "got stuck for ")) ev.AddNumber("stuck_s", *stuck);
  return ev;
}

std::optional<Event> DeviceAssertRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    std::string_view s = l.body;
    size_t a = s.find("Assertion `");
    if (a != std::string_view::npos && Has(s, "block: [")) {
      size_t end = s.find("` failed", a + 11);
      if (end == std::string_view::npos) continue;
      Event ev = MakeEvent(EventKind::kDeviceAssert, l);
      ev.AddString("assertion", s.substr(a + 11, end - a - 11));
      // "/path/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: ..."
      std::string_view head = s.substr(0, s.find(": block: ["));
      if (size_t k = head.rfind(": "); k != std::string_view::npos) {
        ev.AddString("kernel", head.substr(k + 2));
        ev.AddString("location", Trim(head.substr(0, k)));
      }
      return ev;
    }
    if (Has(s, "device-side assert triggered")) {
      Event ev = MakeEvent(EventKind::kDeviceAssert, l);
      AddMessage(&ev, s);
      return ev;
    }
  }
  return std::nullopt;
}

std::optional<Event> NoKernelImageRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    if (Has(l.body, "no kernel image is available for execution")) {
      Event ev = MakeEvent(EventKind::kNoKernelImage, l);
      AddMessage(&ev, l.body);
      return ev;
    }
    // "NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible
    // with the current PyTorch installation."
    if (Has(l.body, "is not compatible with the current PyTorch installation")) {
      Event ev = MakeEvent(EventKind::kNoKernelImage, l);
      std::string_view cap = TextAfter(l.body, "CUDA capability ", " ");
      if (!cap.empty()) ev.AddString("capability", cap);
      ev.AddString("message", Trim(l.body));
      return ev;
    }
  }
  return std::nullopt;
}

std::optional<Event> DriverTooOldRule(const std::vector<Line>& lines) {
  const Line* l = FindLine(lines, {"The NVIDIA driver on your system is too old",
                                   "CUDA driver version is insufficient for CUDA runtime version"});
  if (!l) return std::nullopt;
  Event ev = MakeEvent(EventKind::kDriverTooOld, *l);
  AddMessage(&ev, l->body);
  if (auto v = NumberAfter(l->body, "(found version ")) ev.AddNumber("found_version", *v);
  return ev;
}

// "Tried to allocate 2.00 GiB", "trying to allocate 17179869184 bytes".
std::string_view RequestedBytes(std::string_view s) {
  size_t at = s.find("to allocate ");
  if (at == std::string_view::npos) return {};
  std::string_view rest = s.substr(at + 12);
  std::string_view num = LeadingNumber(rest);
  if (num.empty() || num.size() + 1 >= rest.size() || rest[num.size()] != ' ') return {};
  size_t u = num.size() + 1;
  size_t e = u;
  while (e < rest.size() && IsAlpha(rest[e])) ++e;
  if (e == u) return {};
  return rest.substr(0, e);
}

std::optional<Event> CudaOomRule(const std::vector<Line>& lines) {
  const Line* l =
      FindLine(lines, {"CUDA out of memory", "OutOfMemoryError", "CUDA error: out of memory",
                       "OOM when allocating", "ResourceExhaustedError"});
  if (!l) {
    for (const Line& c : lines) {
      // XLA's allocator says no "memory": "RESOURCE_EXHAUSTED: Failed to
      // allocate request for 176.00MiB (184549376B) on device ordinal 0".
      if (c.searched && Has(c.body, "RESOURCE_EXHAUSTED") &&
          (Has(c.body, "memory") || Has(c.body, "OOM") ||
           (Has(c.body, "Failed to allocate") && Has(c.body, " on device")))) {
        l = &c;
        break;
      }
    }
  }
  // The CUDA runtime's and allocators' words outside PyTorch: llama.cpp's
  // "cudaMalloc failed: out of memory", TensorRT-LLM's "::cudaMallocAsync(...):
  // out of memory", TGI's "Allocation on device 0 would exceed allowed
  // memory. (out of memory)". The kernel's OOM killer is matched before.
  for (const Line& c : lines) {
    if (l) break;
    if (!c.searched || FindNoCase(c.body, "out of memory") == std::string_view::npos) continue;
    if (Has(c.body, " NCCL WARN ")) continue;  // NCCL's report: NcclErrorRule gives its cause
    if (Has(c.body, "ran out of memory trying to allocate"))
      continue;  // TF's warning: it may recover
    for (std::string_view device : {"cudamalloc", "cuda", "gpu", "on device", "vram"}) {
      if (FindNoCase(c.body, device) != std::string_view::npos) {
        l = &c;
        break;
      }
    }
  }
  if (!l) return std::nullopt;
  Event ev = MakeEvent(EventKind::kCudaOom, *l);
  AddMessage(&ev, l->body);
  std::string_view req = RequestedBytes(l->body);
  if (!req.empty()) ev.AddString("requested", req);
  return ev;
}

std::optional<Event> DataloaderRule(const std::vector<Line>& lines) {
  const Line* l = FindLine(lines, {"DataLoader worker (pid"});
  if (!l) l = FindLine(lines, {"insufficient shared memory (shm)"});
  if (!l) return std::nullopt;
  Event ev = MakeEvent(EventKind::kDataloaderKilled, *l);
  AddMessage(&ev, l->body);
  if (Has(l->body, "DataLoader worker (pid")) {
    if (auto pid = PidIn(l->body)) ev.AddNumber("pid", *pid);
    std::string_view sig = TextAfter(l->body, "killed by signal: ", ".");
    if (!sig.empty()) ev.AddString("signal", sig);
  }
  return ev;
}

std::optional<Event> NcclErrorRule(const std::vector<Line>& lines) {
  const Line* l = FindLine(
      lines, {"NCCL error", "ncclInternalError", "ncclSystemError", "ncclUnhandledCudaError",
              "ncclInvalidUsage", "ncclRemoteError", "NCCL communicator was aborted"});
  if (!l) {
    for (const Line& c : lines) {
      if (c.searched && Has(c.body, "unhandled system error") &&
          FindNoCase(c.body, "nccl") != std::string_view::npos) {
        l = &c;
        break;
      }
    }
  }
  if (l) {
    Event ev = MakeEvent(EventKind::kNcclError, *l);
    AddMessage(&ev, l->body);
    std::string_view version = TextAfter(l->body, "NCCL version ", " ,\r");
    if (!version.empty()) ev.AddString("nccl_version", version);
    return ev;
  }
  // "node1:1234:5678 [0] NCCL WARN NET/Socket : ..." (collect/logs keeps
  // the WARN line first in its block).
  l = FindLine(lines, {" NCCL WARN "});
  if (!l) return std::nullopt;
  Event ev = MakeEvent(EventKind::kNcclError, *l);
  std::string_view s = l->body;
  ev.AddString("message", Trim(s.substr(s.find(" NCCL WARN ") + 11)));
  return ev;
}

// The phrase of a CUDA runtime error, from its marker to the line's end.
std::optional<Event> CudaErrorRule(const std::vector<Line>& lines, std::string* key) {
  static constexpr std::string_view kMarkers[] = {"CUDA error",
                                                  "cuda runtime error",  // THC, PyTorch < 1.5
                                                  "CUDA_ERROR_",
                                                  "CUBLAS_STATUS_",
                                                  "CUDNN_STATUS_",
                                                  "cuDNN error",
                                                  "illegal memory access was encountered",
                                                  "unspecified launch failure"};
  for (const Line& l : lines) {
    if (!l.searched) continue;
    for (std::string_view m : kMarkers) {
      size_t at = l.body.find(m);
      if (at == std::string_view::npos) continue;
      Event ev = MakeEvent(EventKind::kCudaError, l);
      AddMessage(&ev, l.body);
      key->assign(CutUtf8(Trim(l.body.substr(at)), 120));
      return ev;
    }
  }
  return std::nullopt;
}

// "nan loss detected", "NaN loss at step 5": the words themselves, as a
// whole word ("Titan loss" is not one).
bool NanLossWords(std::string_view s) {
  size_t at = FindNoCase(s, "nan loss");
  return at != std::string_view::npos && (at == 0 || !IsAlpha(s[at - 1]));
}

std::optional<Event> NanLossTextRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    if (FindNoCase(l.body, "loss is nan") != std::string_view::npos ||
        FindNoCase(l.body, "loss is inf") != std::string_view::npos ||
        Has(l.body, "Loss became infinite or NaN") || NanLossWords(l.body)) {
      Event ev = MakeEvent(EventKind::kNanLoss, l);
      AddMessage(&ev, l.body);
      return ev;
    }
  }
  return std::nullopt;
}

// Steps skipped for fp16 overflow as the trainers count them: DeepSpeed's
// "step=40, skipped=2, lr=[...]" and InternEvo's "inf_nan_skip_batches=3"
// (since the start: a new event when it grows) and Megatron's "number of skipped iterations:  10 |"
// (in this logging interval: an event when not 0).
std::optional<Event> SkippedStepsRule(const std::vector<Line>& lines, int64_t* skipped_so_far) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    std::string_view s = l.body;
    // Counters since the start: DeepSpeed's "step=40, skipped=2",
    // InternEvo's "step=642 ... inf_nan_skip_batches=3".
    std::string_view counter;
    for (std::string_view key : {", skipped=", " inf_nan_skip_batches="}) {
      if (Has(s, key)) counter = key;
    }
    if (!counter.empty() && Has(s, "step=")) {
      auto skipped = NumberAfter(s, counter);
      if (!skipped || *skipped <= *skipped_so_far) {
        if (skipped) *skipped_so_far = *skipped;
        continue;
      }
      *skipped_so_far = *skipped;
      Event ev = MakeEvent(EventKind::kLossOverflow, l);
      ev.AddNumber("skipped", *skipped);
      return ev;
    }
    if (size_t at = s.find("number of skipped iterations:"); at != std::string_view::npos) {
      std::string_view rest = Trim(s.substr(at + 29));
      std::string_view n = LeadingNumber(rest);
      auto skipped = ParseInt64(n);
      if (!skipped || *skipped <= 0) continue;
      Event ev = MakeEvent(EventKind::kLossOverflow, l);
      ev.AddNumber("skipped", *skipped);
      return ev;
    }
  }
  return std::nullopt;
}

std::optional<Event> LossOverflowRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    std::string_view s = l.body;
    // apex/fp16: "Gradient overflow.  Skipping step, loss scaler 0 reducing
    // loss scale to 32768.0"
    if (Has(s, "Gradient overflow") && Has(s, "Skipping step")) {
      Event ev = MakeEvent(EventKind::kLossOverflow, l);
      size_t at = s.find("reducing loss scale to ");
      std::string_view scale =
          at == std::string_view::npos ? std::string_view{} : LeadingNumber(s.substr(at + 23));
      if (!scale.empty()) ev.AddNumberText("loss_scale", scale);
      return ev;
    }
    // fairseq: "NOTE: overflow detected, setting loss scale to: 0.00048828125"
    if (Has(s, "overflow detected, setting loss scale to")) {
      Event ev = MakeEvent(EventKind::kLossOverflow, l);
      std::string_view scale = LeadingNumber(Trim(TextAfter(s, "setting loss scale to:", "\r")));
      if (!scale.empty()) ev.AddNumberText("loss_scale", scale);
      return ev;
    }
    // DeepSpeed: "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss
    // scale: 65536, reducing to 32768"
    // Newer DeepSpeed ZeRO: "Overflow detected. Skipping step. Attempted loss
    // scale: 65536, reducing to 32768".
    if (Has(s, "OVERFLOW! Rank") ||
        ((Has(s, "OVERFLOW!") || Has(s, "Overflow detected")) && Has(s, "Skipping step"))) {
      Event ev = MakeEvent(EventKind::kLossOverflow, l);
      if (auto rank = NumberAfter(s, "OVERFLOW! Rank ")) ev.AddNumber("rank", *rank);
      size_t at = s.find("Attempted loss scale: ");
      if (at != std::string_view::npos) {
        std::string_view a = LeadingNumber(s.substr(at + 22));
        if (!a.empty()) ev.AddNumberText("attempted_loss_scale", a);
      }
      at = s.find("reducing to ");
      if (at != std::string_view::npos) {
        std::string_view r = LeadingNumber(s.substr(at + 12));
        if (!r.empty()) ev.AddNumberText("loss_scale", r);
      }
      return ev;
    }
  }
  return std::nullopt;
}

std::optional<Event> SegfaultRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    std::string_view s = l.body;
    if (FindNoCase(s, "segmentation fault") != std::string_view::npos || Has(s, "SIGSEGV") ||
        TorchrunExitCode(s) == -11) {
      Event ev = MakeEvent(EventKind::kSegfault, l);
      if (auto pid = PidIn(s)) ev.AddNumber("pid", *pid);
      ev.AddString("message", Trim(s));
      return ev;
    }
    // The kernel's report: "test1[33417]: segfault at 656c6c6f ip ... error 4 in test1[...]".
    if (size_t at = s.find("]: segfault at "); at != std::string_view::npos) {
      Event ev = MakeEvent(EventKind::kSegfault, l);
      size_t open = s.rfind('[', at);
      if (open != std::string_view::npos) {
        if (auto pid = ParseInt64(s.substr(open + 1, at - open - 1))) ev.AddNumber("pid", *pid);
        size_t b = open;
        while (b > 0 && s[b - 1] != ' ' && s[b - 1] != ']') --b;
        if (b < open) ev.AddString("process", s.substr(b, open - b));
      }
      ev.AddString("message", Trim(s.substr(at + 3)));
      return ev;
    }
  }
  return std::nullopt;
}

// A shell's report of a job killed by SIGKILL ("Killed", or "bash: line 1:
// 1234 Killed   python train.py") and torchrun's (exit code -9): most
// often the OOM killer.
std::optional<Event> KilledRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    std::string_view s = Trim(l.body);
    if (s == "Killed") {
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      ev.AddString("message", s);
      return ev;
    }
    if (size_t k = s.find(" Killed ");
        k != std::string_view::npos && Has(s.substr(0, k), ": line ")) {
      // "...: line 5: 12345 Killed                  python train.py"
      std::string_view before = s.substr(0, k);
      size_t sp = before.rfind(' ');
      std::string_view pid_text = before.substr(sp + 1);
      std::string_view pid_rest = pid_text;
      auto pid = NumberAfter(pid_rest, "");
      if (!pid || LeadingNumber(pid_text).size() != pid_text.size()) continue;
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      ev.AddNumber("pid", *pid);
      std::string_view cmd = Trim(s.substr(k + 8));
      std::string_view prog = cmd.substr(0, cmd.find(' '));
      if (size_t slash = prog.rfind('/'); slash != std::string_view::npos) {
        prog.remove_prefix(slash + 1);
      }
      if (!prog.empty()) ev.AddString("process", prog);
      return ev;
    }
    if (TorchrunExitCode(s) == -9 || Has(s, "Signal 9 (SIGKILL)")) {
      Event ev = MakeEvent(EventKind::kOomKilled, l);
      if (auto pid = PidIn(s)) ev.AddNumber("pid", *pid);
      ev.AddString("message", s);
      return ev;
    }
  }
  return std::nullopt;
}

// Whether s[at] begins the message of a line: the line's start, or right
// after a logger's prefix ("INFO:__main__:", "... - INFO - ", "[12:00:01] ").
bool AtMessageStart(std::string_view s, size_t at) {
  if (at == 0) return true;
  auto separator = [](char c) { return c == ':' || c == ']' || c == '-' || c == '|'; };
  if (separator(s[at - 1])) return true;
  if (s[at - 1] != ' ') return false;
  if (at >= 2 && separator(s[at - 2])) return true;
  // After a log level padded with spaces, as loguru-style prefixes without a
  // '|' write it (AutoTrain's "> INFO    Finished training, ..."): the level
  // in capitals, a whole word.
  size_t end = at - 1;
  while (end > 0 && s[end - 1] == ' ') --end;
  for (std::string_view level : {"INFO", "WARNING", "WARN", "ERROR", "DEBUG", "NOTICE"}) {
    if (end >= level.size() && s.substr(end - level.size(), level.size()) == level &&
        (end == level.size() || !IsAlpha(s[end - level.size() - 1]))) {
      return true;
    }
  }
  return false;
}

// "Training time 5:47:14", "Total training time: 0:12:34": the phrase at the
// start of the message (after "Total "), then a duration with a ':'.
bool TrainingDuration(std::string_view s) {
  size_t at = FindNoCase(s, "training time");
  if (at == std::string_view::npos) return false;
  size_t start = at;
  if (at >= 6 && FindNoCase(s.substr(at - 6, 6), "total ") == 0) start = at - 6;
  if (!AtMessageStart(s, start) || (start == at && s[at] != 'T')) return false;
  size_t i = at + 13;
  if (i < s.size() && s[i] == ':') ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  return i < s.size() && IsDigit(s[i]) && s.substr(i).find(':') != std::string_view::npos;
}

// "| End of training | test loss 4.87 |" (pytorch/examples' word language
// model), "End of training.": the phrase starts the message and is followed
// only by spaces, then the line's end or one of | . , : ! -- so "End of
// training data" is no end of a run.
bool EndOfTraining(std::string_view s) {
  size_t at = FindNoCase(s, "end of training");
  if (at == std::string_view::npos || !AtMessageStart(s, at)) return false;
  size_t i = at + 15;
  while (i < s.size() && s[i] == ' ') ++i;
  return i == s.size() || s[i] == '|' || s[i] == '.' || s[i] == ',' || s[i] == ':' || s[i] == '!';
}

// Normal ends a trainer prints. Conservative: a generic phrase counts only
// at the start of the message and never on a line about an epoch.
std::optional<Event> CompletedRule(const std::vector<Line>& lines) {
  for (const Line& l : lines) {
    if (!l.searched) continue;
    std::string_view s = Trim(l.body);
    // MAE/DeiT-style loops end with "Training time 5:47:14" (a duration), others
    // with "Total training time: 0:12:34".
    bool duration = TrainingDuration(s);
    // Hugging Face Trainer's summary block after train(): "***** train metrics *****".
    bool done = duration || Has(s, "***** train metrics *****") ||
                Has(s, "Training completed. Do not forget to share your model") ||
                (Has(s, "Trial ") && Has(s, " completed training after ")) ||  // Ray Tune
                (Has(s, "`Trainer.fit` stopped: `max_") && Has(s, "` reached")) ||
                Has(s, " epochs completed in ");
    if (!done && FindNoCase(s, "epoch") == std::string_view::npos) {
      done = EndOfTraining(s);
      for (std::string_view phrase : {"training completed", "training complete",
                                      "training finished", "finished training", "training done"}) {
        if (done) break;
        size_t at = FindNoCase(s, phrase);
        if (at == std::string_view::npos) continue;
        size_t end = at + phrase.size();
        if (AtMessageStart(s, at) && (end == s.size() || !IsAlpha(s[end]))) {
          done = true;
          break;
        }
      }
    }
    if (!done) continue;
    Event ev = MakeEvent(EventKind::kCompleted, l);
    ev.AddString("message", s);
    return ev;
  }
  return std::nullopt;
}

// A frame line, `  File "path", line N, in function`: its path, number and
// function.
struct Frame {
  std::string_view file, function;
  std::string_view line;
};
bool ParseFrame(std::string_view body, Frame* f) {
  std::string_view t = Trim(body);
  if (!t.starts_with("File \"")) return false;
  size_t close = t.find('"', 6);
  if (close == std::string_view::npos) return false;
  f->file = t.substr(6, close - 6);
  std::string_view rest = t.substr(close + 1);
  if (!rest.starts_with(", line ")) return false;
  rest.remove_prefix(7);
  size_t n = 0;
  while (n < rest.size() && IsDigit(rest[n])) ++n;
  if (n == 0) return false;
  f->line = rest.substr(0, n);
  rest.remove_prefix(n);
  f->function = rest.starts_with(", in ") ? Trim(rest.substr(5)) : std::string_view{};
  return true;
}

// A frame of the user's own code, not of Python, an installed package or
// a frozen module: where "in my code" it crashed.
bool UserFrame(const Frame& f) {
  for (std::string_view lib : {"site-packages/", "dist-packages/", "/lib/python", "<frozen",
                               "\\lib\\", "/usr/lib/", "<string>"}) {
    if (Has(f.file, lib)) return false;
  }
  return true;
}

// A Python traceback: its last exception line, with the innermost frame of
// the user's code. `frames_before`: the record starts after frames seen in
// earlier records (a post that begins mid-traceback, or frames the
// multiline stage could not join), so a leading exception line ends them.
std::string FrameText(const Frame& at) {
  std::string where(at.file);
  where.append(":").append(at.line);
  if (!at.function.empty()) where.append(" in ").append(at.function);
  return where;
}

// `prior_frame`: the frame to name when the frames came in earlier records.
std::optional<Event> TracebackRule(const std::vector<Line>& lines, bool frames_before,
                                   std::string_view prior_frame) {
  const Line* found = nullptr;
  const Line* header = nullptr;  // the last header with no exception after it yet
  bool in_traceback = frames_before;
  // Without a header, only a name that says it is an exception ends the
  // frames (TensorFlow's "Node: 'MatMul'" after its own frame list is not).
  bool header_seen = false;
  Frame frame, user_frame;
  bool have_frame = false, have_user = false;
  std::string_view name, message;
  for (const Line& l : lines) {
    Frame f;
    if (parse::logs::IsTracebackHeader(l.body)) {
      in_traceback = true;
      header = &l;
      header_seen = true;
      continue;
    }
    if (ParseFrame(l.body, &f)) {
      in_traceback = true;
      frame = f;
      have_frame = true;
      if (UserFrame(f)) user_frame = f, have_user = true;
      continue;
    }
    if (!in_traceback || !l.searched) continue;
    std::string_view n, m;
    if (SplitException(l.body, &n, &m, /*strict=*/!header_seen)) {
      found = &l;
      name = n;
      message = m;
      in_traceback = false;
      header = nullptr;
    }
  }
  // A traceback cut short (the process killed while printing it, or a log
  // that ends there) is still one, without its exception.
  if (!found && header == nullptr) return std::nullopt;
  Event ev = MakeEvent(EventKind::kTraceback, found ? *found : *header);
  if (found) ev.AddString("exception", name);
  if (!message.empty()) ev.AddString("message", message);
  if (have_frame) {
    ev.AddString("frame", FrameText(have_user ? user_frame : frame));
  } else if (frames_before && !prior_frame.empty()) {
    ev.AddString("frame", prior_frame);
  }
  return ev;
}

}  // namespace

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kCudaOom:
      return "cuda_oom";
    case EventKind::kNcclError:
      return "nccl_error";
    case EventKind::kNcclTimeout:
      return "nccl_timeout";
    case EventKind::kDeviceAssert:
      return "device_assert";
    case EventKind::kCudaError:
      return "cuda_error";
    case EventKind::kNoKernelImage:
      return "no_kernel_image";
    case EventKind::kDriverTooOld:
      return "driver_too_old";
    case EventKind::kTraceback:
      return "traceback";
    case EventKind::kNanLoss:
      return "nan_loss";
    case EventKind::kLossOverflow:
      return "loss_overflow";
    case EventKind::kDataloaderKilled:
      return "dataloader_killed";
    case EventKind::kSegfault:
      return "segfault";
    case EventKind::kOomKilled:
      return "oom_killed";
    case EventKind::kXid:
      return "xid";
    case EventKind::kCompleted:
      return "completed";
  }
  return "unknown";
}

std::optional<EventKind> EventKindFromName(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(EventKind::kCompleted); ++k) {
    if (name == EventKindName(static_cast<EventKind>(k))) return static_cast<EventKind>(k);
  }
  return std::nullopt;
}

void Event::AddString(std::string_view key, std::string_view value) {
  details.push_back({std::string(key), std::string(CutUtf8(value, kMaxDetailBytes)), false});
}

void Event::AddNumber(std::string_view key, int64_t value) {
  details.push_back({std::string(key), std::to_string(value), true});
}

void Event::AddNumberText(std::string_view key, std::string_view text) {
  details.push_back({std::string(key), std::string(text), true});
}

const EventDetail* Event::Find(std::string_view key) const {
  for (const auto& d : details) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

std::string EventJson(const Event& event) {
  std::string out = "{\"line\": ";
  out += std::to_string(event.line);
  out += ", \"event\": ";
  AppendJsonString(&out, EventKindName(event.kind));
  for (const EventDetail& d : event.details) {
    out += ", ";
    AppendJsonString(&out, d.key);
    out += ": ";
    if (d.number) {
      out += d.value;
    } else {
      AppendJsonString(&out, d.value);
    }
  }
  out += '}';
  return out;
}

bool LogEventDetector::Repeats(const Event& ev, std::string_view key) {
  while (!recent_.empty() && ev.line - recent_.front().line > kRepeatWindowLines) {
    recent_.pop_front();
  }
  for (Recent& r : recent_) {
    if (r.kind == ev.kind && (r.key == key || r.key.empty() || key.empty())) {
      r.line = ev.line;  // a long burst of repeats stays one event
      return true;
    }
  }
  if (recent_.size() >= 16) recent_.pop_front();
  recent_.push_back({ev.kind, std::string(key), ev.line});
  return false;
}

std::optional<Event> LogEventDetector::Specific(const std::vector<Line>& lines,
                                                std::vector<Event>* extra) {
  auto pid_key = [](const Event& ev) {
    const EventDetail* pid = ev.Find("pid");
    return pid ? pid->value : std::string();
  };
  // A repeated fact of one failure is reported once.
  auto once = [this](std::optional<Event> ev, std::string_view key) -> std::optional<Event> {
    if (ev && Repeats(*ev, key)) return std::nullopt;
    return ev;
  };
  // The first rule that matches decides, even when its event is a repeat:
  // a less specific rule must not speak for the same text.
  if (auto ev = XidRule(lines)) return ev;
  if (auto ev = KernelOomRule(lines)) {
    std::string key = ev->Find("invoked_by") ? "invoked" : pid_key(*ev);
    return once(std::move(ev), key);
  }
  if (auto ev = NcclTimeoutRule(lines)) {
    std::string key;
    for (const char* k : {"rank", "op", "seq"}) {
      if (const EventDetail* d = ev->Find(k)) key += d->value + "/";
    }
    return once(std::move(ev), key);
  }
  if (auto ev = DeviceAssertRule(lines)) return once(std::move(ev), "");
  if (auto ev = NoKernelImageRule(lines)) return once(std::move(ev), "");
  if (auto ev = DriverTooOldRule(lines)) return once(std::move(ev), "");
  if (auto ev = CudaOomRule(lines)) return once(std::move(ev), "");
  if (auto ev = DataloaderRule(lines)) {
    std::string key = pid_key(*ev);
    // "... is killed by signal: Segmentation fault.": the worker crashed.
    const EventDetail* signal = ev->Find("signal");
    if (signal != nullptr && signal->value == "Segmentation fault") {
      Event cause = MakeEvent(EventKind::kSegfault, *FindLine(lines, {"DataLoader worker (pid"}));
      if (const EventDetail* pid = ev->Find("pid")) cause.AddNumberText("pid", pid->value);
      cause.AddString("message", "DataLoader worker killed by signal: Segmentation fault");
      if (!Repeats(cause, key)) extra->push_back(std::move(cause));
    }
    return once(std::move(ev), key);
  }
  if (auto ev = NcclErrorRule(lines)) {
    // An NCCL WARN block and the Python error it causes are two views of
    // one failure, and each rank prints both.
    std::string key = ev->Find("exception") ? "error" : "warn";
    // "NCCL WARN Cuda failure 'an illegal memory access was encountered'":
    // the CUDA error is the cause, NCCL only reports it.
    if (const Line* cuda = FindLine(lines, {"Cuda failure"}); cuda != nullptr) {
      bool oom = FindNoCase(cuda->body, "out of memory") != std::string_view::npos;
      Event cause = MakeEvent(oom ? EventKind::kCudaOom : EventKind::kCudaError, *cuda);
      std::string_view text = cuda->body.substr(cuda->body.find("Cuda failure"));
      cause.AddString("message", Trim(text));
      if (!Repeats(cause, "nccl")) extra->push_back(std::move(cause));
    }
    return once(std::move(ev), key);
  }
  std::string cuda_key;
  if (auto ev = CudaErrorRule(lines, &cuda_key)) return once(std::move(ev), cuda_key);
  if (auto ev = NanLossTextRule(lines)) return ev;
  if (auto ev = LossOverflowRule(lines)) {
    last_overflow_line_ = ev->line;
    return ev;
  }
  if (auto ev = SkippedStepsRule(lines, &skipped_steps_)) {
    // The count of a skip an OVERFLOW line has just reported.
    bool reported = last_overflow_line_ > 0 && ev->line - last_overflow_line_ <= kRepeatWindowLines;
    if (!reported) return ev;
  }
  if (auto ev = SegfaultRule(lines)) {
    std::string key = pid_key(*ev);
    return once(std::move(ev), key);
  }
  if (auto ev = KilledRule(lines)) {
    std::string key = pid_key(*ev);
    return once(std::move(ev), key);
  }
  if (auto ev = CompletedRule(lines)) return once(std::move(ev), "");
  return std::nullopt;
}

std::vector<Event> LogEventDetector::Detect(std::string_view record, int64_t first_line) {
  std::vector<Event> out;
  bool frames_before = last_frame_line_ > 0 && first_line > last_frame_line_ &&
                       first_line - last_frame_line_ <= kFrameGapLines;
  if (!frames_before && !MayHaveEvent(record)) return out;
  const std::vector<Line> lines = SplitRecord(record, first_line);
  if (!frames_before) open_frame_.clear(), open_frame_is_user_ = false;
  // A frame's source line and Python 3.11's "^^^^" marks under it, or a
  // blank line, as records of their own: the frames go on.
  bool continues = frames_before && std::all_of(lines.begin(), lines.end(), [](const Line& l) {
                     return l.body.empty() || IsSpace(l.body[0]);
                   });
  if (continues) last_frame_line_ = lines.back().number;
  for (const Line& l : lines) {
    Frame f;
    if (!ParseFrame(l.body, &f)) continue;
    last_frame_line_ = l.number;
    // The innermost frame of the user's code, else the innermost one.
    bool user = UserFrame(f);
    if (user || !open_frame_is_user_) open_frame_ = FrameText(f), open_frame_is_user_ = user;
  }
  std::vector<Event> extra;
  if (auto ev = Specific(lines, &extra)) out.push_back(std::move(*ev));
  for (Event& ev : extra) out.push_back(std::move(ev));
  // A traceback is reported as such too, with where in the user's code it
  // happened; the ranks of one job print the same one, reported once.
  if (auto tb = TracebackRule(lines, frames_before, open_frame_)) {
    last_frame_line_ = 0;
    open_frame_.clear();
    open_frame_is_user_ = false;
    std::string key;
    for (const char* k : {"exception", "frame"}) {
      if (const EventDetail* d = tb->Find(k)) key += d->value + "/";
    }
    if (!Repeats(*tb, key)) out.push_back(std::move(*tb));
  }
  return out;
}

}  // namespace vigil::parse::training
