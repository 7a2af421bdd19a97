#include "wire/jobs.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::wire {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Encoding. The order of the keys is the document's (docs/wire.md): the
// history files and snapshots written before this codec existed must compare
// byte for byte with what it writes for the same data, but for the fields
// added since (a job's "user" and "uid", after "container_id").

void WriteKernelEvent(const KernelEventRecord& k, JsonWriter* w) {
  w->Key("time_ms").Int(k.time_ms).Key("pid").Int(k.pid);
  w->Key("event").String(k.event.kind);
  w->Key("line").Int(k.event.line);
  w->Key("details").BeginArray();
  for (const JobEventDetail& d : k.event.details) {
    w->BeginObject().Key("key").String(d.key).Key("value").String(d.value);
    w->Key("number").Bool(d.number).EndObject();
  }
  w->EndArray();
}

void WriteRunExit(const std::optional<RunExitRecord>& x, JsonWriter* w) {
  if (!x) {
    w->Null();
    return;
  }
  w->BeginObject().Key("ended_ms").Int(x->ended_ms).Key("exit_code");
  if (x->exit_code) {
    w->Int(*x->exit_code);
  } else {
    w->Null();
  }
  w->Key("signal").Int(x->signal).Key("signal_name").String(x->signal_name);
  w->EndObject();
}

void WriteJob(const JobRecord& j, JsonWriter* w) {
  w->BeginObject();
  w->Key("id").String(j.id).Key("name").String(j.name);
  w->Key("kind").String(j.kind).Key("framework").String(j.framework);
  w->Key("launcher").String(j.launcher).Key("trainer").String(j.trainer);
  w->Key("world_size").Int(j.world_size);
  w->Key("container_id").String(j.container_id);
  w->Key("user").String(j.user).Key("uid").Int(j.uid);
  w->Key("master_addr").String(j.master_addr).Key("master_port").Int(j.master_port);
  w->Key("start_time_ms").Int(j.start_time_ms);
  w->Key("first_seen_ms").Int(j.first_seen_ms).Key("last_seen_ms").Int(j.last_seen_ms);
  w->Key("ended").Bool(j.ended);
  w->Key("processes").BeginArray();
  for (const JobProcessRecord& p : j.processes) {
    w->BeginObject().Key("pid").Int(p.pid).Key("ppid").Int(p.ppid);
    w->Key("role").String(p.role);
    w->Key("rank").Int(p.rank).Key("local_rank").Int(p.local_rank);
    w->Key("start_time_ms").Int(p.start_time_ms).Key("cmdline").String(p.cmdline);
    w->EndObject();
  }
  w->EndArray();
  w->Key("run_exit");
  WriteRunExit(j.run_exit, w);
  w->Key("kernel_events").BeginArray();
  for (const KernelEventRecord& k : j.kernel_events) {
    w->BeginObject();
    WriteKernelEvent(k, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

// ---------------------------------------------------------------------------
// Decoding: a SAX handler that fills the structs as the parser walks the
// text. A DOM would cost memory for every unknown field, and tens of bytes
// for every "{}" of a hostile document, before any bound could be checked.

// Where the parser is: one entry per open object or array.
enum class Ctx : uint8_t {
  kSkip,  // not part of a snapshot (unknown field, wrong type, list full): read, ignored
  kRoot,
  kJobs,
  kJob,
  kProcesses,
  kProcess,
  kRunExit,
  kKernelEvents,  // a job's
  kKernelEvent,
  kNodeEvents,
  kNodeEvent,
  kDetails,
  kDetail,
};

// Appends to a list that keeps its newest `max` entries: once full, a ring
// (Unroll puts it back in order), so a long list costs no shifting.
template <typename T>
void KeepNewest(std::vector<T>* list, size_t* seen, size_t max, T&& item) {
  if (list->size() < max) {
    list->push_back(std::move(item));
  } else {
    (*list)[*seen % max] = std::move(item);
  }
  ++*seen;
}

template <typename T>
void Unroll(std::vector<T>* list, size_t seen, size_t max) {
  if (seen > max)
    std::rotate(list->begin(), list->begin() + static_cast<long>(seen % max), list->end());
}

bool IsList(Ctx c) {
  return c == Ctx::kJobs || c == Ctx::kProcesses || c == Ctx::kKernelEvents ||
         c == Ctx::kNodeEvents || c == Ctx::kDetails;
}

// What the value after a key goes into, resolved when the key is read. A
// value of another type leaves the field at the default the key reset it to,
// so a repeated key means what the last one says (as in a DOM).
struct Slot {
  std::variant<std::monostate, std::string*, int64_t*, int*, bool*, std::optional<int>*> target;
  // A string kept whole, to be checked when its record ends: a cut id could
  // name another job.
  bool identity = false;
  Ctx opens = Ctx::kSkip;  // what an object or array value opens
};

class SnapshotReader final : public nlohmann::json_sax<json> {
 public:
  // Set when the document is refused; the parse stops there.
  const std::string& error() const { return error_; }
  // The snapshot read, once the parse succeeded.
  Result<JobsSnapshot> Finish() &&;

  bool null() override { return AfterScalar(); }  // every field's default is what null means
  bool boolean(bool v) override {
    if (InField()) {
      if (auto* b = std::get_if<bool*>(&slot_.target)) **b = v;
    }
    return AfterScalar();
  }
  bool number_integer(number_integer_t v) override {
    if (InField()) SetInt(v);
    return AfterScalar();
  }
  bool number_unsigned(number_unsigned_t v) override {
    // Above int64 no field can hold it: as a value of the wrong type.
    if (InField() && v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      SetInt(static_cast<int64_t>(v));
    }
    return AfterScalar();
  }
  // No field is a fraction: 1.0 and 1e3 are values of the wrong type.
  bool number_float(number_float_t, const string_t&) override { return AfterScalar(); }
  bool string(string_t& v) override {
    if (InField()) {
      if (auto* s = std::get_if<std::string*>(&slot_.target)) {
        if (!slot_.identity && v.size() > kMaxJobsStringBytes) {
          v.resize(CutUtf8(v, kMaxJobsStringBytes).size());
        }
        **s = std::move(v);
      }
    }
    return AfterScalar();
  }
  bool binary(binary_t&) override { return AfterScalar(); }  // not produced by JSON text
  bool start_object(std::size_t) override { return Open(/*object=*/true); }
  bool start_array(std::size_t) override { return Open(/*object=*/false); }
  bool key(string_t& k) override;
  bool end_object() override;
  bool end_array() override;
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override;

 private:
  // Whether the value being read is a field of a record the snapshot keeps
  // (so slot_ says where it goes).
  bool InField() const {
    return !stack_.empty() && !IsList(stack_.back()) && stack_.back() != Ctx::kSkip;
  }
  // What a scalar value callback returns: one outside any object means the
  // document is not a snapshot.
  bool AfterScalar() {
    if (!stack_.empty()) return true;
    return Fail("not a jobs document (not a JSON object)");
  }
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  void SetInt(int64_t v);
  bool Open(bool object);
  // The context an object or array opens where the parser is now, and the
  // record it starts.
  Ctx Opening(bool object);
  Slot Resolve(Ctx ctx, std::string_view key);

  JobsSnapshot out_;
  int64_t version_ = 0;
  std::vector<Ctx> stack_;
  Slot slot_;
  size_t records_ = 0;
  // Events read into the current lists so far, kept or not (KeepNewest).
  size_t kernel_seen_ = 0;
  size_t node_seen_ = 0;
  // The records being read; each kind nests at one place only, so one of each.
  JobRecord job_;
  JobProcessRecord process_;
  KernelEventRecord kernel_;  // of job_
  NodeKernelEventRecord node_event_;
  JobEventDetail detail_;
  JobEvent* event_ = nullptr;  // kernel_.event or node_event_.kernel.event
  std::string error_;
};

void SnapshotReader::SetInt(int64_t v) {
  const bool fits_int =
      v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
  if (auto* p = std::get_if<int64_t*>(&slot_.target)) {
    **p = v;
  } else if (auto* i = std::get_if<int*>(&slot_.target)) {
    if (fits_int) **i = static_cast<int>(v);
  } else if (auto* o = std::get_if<std::optional<int>*>(&slot_.target)) {
    if (fits_int) **o = static_cast<int>(v);
  }
}

Slot SnapshotReader::Resolve(Ctx ctx, std::string_view k) {
  // Each branch resets the field, so that a key of the wrong type, or a
  // repeated key, leaves what the last one says.
  auto str = [](std::string* s, bool identity = false) {
    s->clear();
    return Slot{s, identity, Ctx::kSkip};
  };
  auto i64 = [](int64_t* v, int64_t fallback = 0) {
    *v = fallback;
    return Slot{v, false, Ctx::kSkip};
  };
  auto i32 = [](int* v, int fallback = 0) {
    *v = fallback;
    return Slot{v, false, Ctx::kSkip};
  };
  auto flag = [](bool* v) {
    *v = false;
    return Slot{v, false, Ctx::kSkip};
  };
  // A list or record field: emptied, and what its value opens.
  auto holder = [](auto* field, Ctx c) {
    *field = {};
    return Slot{std::monostate{}, false, c};
  };
  switch (ctx) {
    case Ctx::kRoot:
      if (k == "version") return i64(&version_);
      if (k == "node") return str(&out_.node, /*identity=*/true);
      if (k == "time_ms") return i64(&out_.time_ms);
      if (k == "jobs") return holder(&out_.jobs, Ctx::kJobs);
      if (k == "node_events") {
        node_seen_ = 0;
        return holder(&out_.node_events, Ctx::kNodeEvents);
      }
      break;
    case Ctx::kJob:
      if (k == "id") return str(&job_.id, /*identity=*/true);
      if (k == "name") return str(&job_.name);
      if (k == "kind") return str(&job_.kind);
      if (k == "framework") return str(&job_.framework);
      if (k == "launcher") return str(&job_.launcher);
      if (k == "trainer") return str(&job_.trainer);
      if (k == "world_size") return i32(&job_.world_size);
      if (k == "container_id") return str(&job_.container_id);
      if (k == "user") return str(&job_.user);
      if (k == "uid") return i64(&job_.uid, kUnknownJobUid);
      if (k == "master_addr") return str(&job_.master_addr);
      if (k == "master_port") return i32(&job_.master_port);
      if (k == "start_time_ms") return i64(&job_.start_time_ms);
      if (k == "first_seen_ms") return i64(&job_.first_seen_ms);
      if (k == "last_seen_ms") return i64(&job_.last_seen_ms);
      if (k == "ended") return flag(&job_.ended);
      if (k == "processes") return holder(&job_.processes, Ctx::kProcesses);
      if (k == "run_exit") return holder(&job_.run_exit, Ctx::kRunExit);
      if (k == "kernel_events") {
        kernel_seen_ = 0;
        return holder(&job_.kernel_events, Ctx::kKernelEvents);
      }
      break;
    case Ctx::kProcess:
      if (k == "pid") return i32(&process_.pid);
      if (k == "ppid") return i32(&process_.ppid);
      if (k == "role") return str(&process_.role);
      if (k == "rank") return i32(&process_.rank, -1);
      if (k == "local_rank") return i32(&process_.local_rank, -1);
      if (k == "start_time_ms") return i64(&process_.start_time_ms);
      if (k == "cmdline") return str(&process_.cmdline);
      break;
    case Ctx::kRunExit: {
      RunExitRecord& x = *job_.run_exit;
      if (k == "ended_ms") return i64(&x.ended_ms);
      if (k == "exit_code") {
        x.exit_code.reset();
        return Slot{&x.exit_code, false, Ctx::kSkip};
      }
      if (k == "signal") return i32(&x.signal);
      if (k == "signal_name") return str(&x.signal_name);
      break;
    }
    case Ctx::kKernelEvent:
    case Ctx::kNodeEvent: {
      KernelEventRecord& e = ctx == Ctx::kKernelEvent ? kernel_ : node_event_.kernel;
      if (k == "time_ms") return i64(&e.time_ms);
      if (k == "pid") return i32(&e.pid);
      if (k == "event") return str(&e.event.kind);
      if (k == "line") return i64(&e.event.line);
      if (k == "details") return holder(&e.event.details, Ctx::kDetails);
      if (ctx == Ctx::kNodeEvent && k == "job_id") {
        return str(&node_event_.job_id, /*identity=*/true);
      }
      break;
    }
    case Ctx::kDetail:
      if (k == "key") return str(&detail_.key);
      if (k == "value") return str(&detail_.value);
      if (k == "number") return flag(&detail_.number);
      break;
    default:
      break;
  }
  return Slot{};
}

bool SnapshotReader::key(string_t& k) {
  slot_ = InField() ? Resolve(stack_.back(), k) : Slot{};
  return true;
}

Ctx SnapshotReader::Opening(bool object) {
  if (stack_.empty()) return object ? Ctx::kRoot : Ctx::kSkip;
  const Ctx top = stack_.back();
  if (top == Ctx::kSkip) return Ctx::kSkip;
  if (!IsList(top)) {
    // A field's value: only the fields that hold a list or a record open one.
    const Ctx c = slot_.opens;
    if (c == Ctx::kSkip || IsList(c) == object) return Ctx::kSkip;
    if (c == Ctx::kRunExit) job_.run_exit.emplace();
    return c;
  }
  // An element of a list: records only, while the list has room.
  if (!object) return Ctx::kSkip;
  switch (top) {
    case Ctx::kJobs:
      if (out_.jobs.size() >= kMaxSnapshotJobs) return Ctx::kSkip;
      job_ = {};
      return Ctx::kJob;
    case Ctx::kProcesses:
      if (job_.processes.size() >= kMaxJobProcesses) return Ctx::kSkip;
      process_ = {};
      return Ctx::kProcess;
    case Ctx::kKernelEvents:  // oldest first: every one is read, the newest kept
      kernel_ = {};
      event_ = &kernel_.event;
      return Ctx::kKernelEvent;
    case Ctx::kNodeEvents:
      node_event_ = {};
      event_ = &node_event_.kernel.event;
      return Ctx::kNodeEvent;
    case Ctx::kDetails:
      if (event_->details.size() >= kMaxJobEventDetails) return Ctx::kSkip;
      detail_ = {};
      return Ctx::kDetail;
    default:
      return Ctx::kSkip;
  }
}

bool SnapshotReader::Open(bool object) {
  if (stack_.empty() && !object) return Fail("not a jobs document (not a JSON object)");
  if (stack_.size() >= static_cast<size_t>(kMaxJobsSnapshotDepth)) {
    return Fail("jobs document nested deeper than " + std::to_string(kMaxJobsSnapshotDepth) +
                " levels");
  }
  const Ctx c = Opening(object);
  if (c != Ctx::kSkip && c != Ctx::kRoot && !IsList(c) && ++records_ > kMaxJobsSnapshotRecords) {
    return Fail("jobs document holds more than " + std::to_string(kMaxJobsSnapshotRecords) +
                " records (jobs, processes, run exits, events and details)");
  }
  stack_.push_back(c);
  return true;
}

bool SnapshotReader::end_object() {
  const Ctx c = stack_.back();
  stack_.pop_back();
  switch (c) {
    case Ctx::kJob:
      // A uid outside uid_t names no one: out of its type's range.
      if (job_.uid < 0 || job_.uid > kMaxJobUid) job_.uid = kUnknownJobUid;
      if (!job_.id.empty() && job_.id.size() <= kMaxJobsStringBytes) {
        out_.jobs.push_back(std::move(job_));
      }
      break;
    case Ctx::kProcess:
      job_.processes.push_back(std::move(process_));
      break;
    case Ctx::kKernelEvent:
      // An event without a kind says nothing a reader could act on.
      if (!kernel_.event.kind.empty()) {
        KeepNewest(&job_.kernel_events, &kernel_seen_, kMaxJobKernelEvents, std::move(kernel_));
      }
      break;
    case Ctx::kNodeEvent:
      if (!node_event_.kernel.event.kind.empty() &&
          node_event_.job_id.size() <= kMaxJobsStringBytes) {
        KeepNewest(&out_.node_events, &node_seen_, kMaxNodeKernelEvents, std::move(node_event_));
      }
      break;
    case Ctx::kDetail:
      event_->details.push_back(std::move(detail_));
      break;
    default:
      break;
  }
  return true;
}

bool SnapshotReader::end_array() {
  const Ctx c = stack_.back();
  stack_.pop_back();
  if (c == Ctx::kKernelEvents) Unroll(&job_.kernel_events, kernel_seen_, kMaxJobKernelEvents);
  if (c == Ctx::kNodeEvents) Unroll(&out_.node_events, node_seen_, kMaxNodeKernelEvents);
  return true;
}

bool SnapshotReader::parse_error(std::size_t, const std::string&,
                                 const nlohmann::detail::exception& e) {
  // "[json.exception.parse_error.101] parse error at line 1, column 7: ...":
  // the part after the tag, cut, as the token it quotes may be most of the input.
  std::string_view what = e.what();
  if (auto tag = what.find("] "); tag != std::string_view::npos) what.remove_prefix(tag + 2);
  return Fail("not a jobs document (not JSON: " + std::string(CutUtf8(what, 200)) + ")");
}

Result<JobsSnapshot> SnapshotReader::Finish() && {
  if (version_ != kJobsSnapshotVersion) {
    return InvalidArgument("jobs document version " + std::to_string(version_) +
                           ", this Vigil reads " + std::to_string(kJobsSnapshotVersion));
  }
  if (out_.node.size() > kMaxJobsNodeBytes) {
    return InvalidArgument("jobs document names a node of " + std::to_string(out_.node.size()) +
                           " bytes; at most " + std::to_string(kMaxJobsNodeBytes));
  }
  return std::move(out_);
}

}  // namespace

std::string EncodeJobsSnapshot(const JobsSnapshot& snapshot) {
  JsonWriter w;
  w.BeginObject().Key("version").Int(kJobsSnapshotVersion);
  w.Key("node").String(snapshot.node).Key("time_ms").Int(snapshot.time_ms);
  w.Key("jobs").BeginArray();
  for (const JobRecord& j : snapshot.jobs) WriteJob(j, &w);
  w.EndArray();
  w.Key("node_events").BeginArray();
  for (const NodeKernelEventRecord& e : snapshot.node_events) {
    w.BeginObject();
    WriteKernelEvent(e.kernel, &w);
    w.Key("job_id").String(e.job_id).EndObject();
  }
  w.EndArray().EndObject();
  return w.Release();
}

Result<JobsSnapshot> DecodeJobsSnapshot(std::string_view text) {
  if (text.size() > kMaxJobsSnapshotBytes) {
    return InvalidArgument("jobs document of " + std::to_string(text.size()) + " bytes; at most " +
                           std::to_string(kMaxJobsSnapshotBytes));
  }
  SnapshotReader reader;
  bool parsed = false;
  try {
    parsed = json::sax_parse(text.data(), text.data() + text.size(), &reader);
  } catch (const json::exception& e) {
    // The parser reports errors through parse_error(); this only keeps the
    // promise that no exception leaves the module.
    return InvalidArgument(std::string("not a jobs document: ") + e.what());
  }
  if (!parsed) {
    return InvalidArgument(reader.error().empty() ? "not a jobs document" : reader.error());
  }
  return std::move(reader).Finish();
}

std::string JobsKey(const std::vector<JobRecord>& jobs) {
  std::string key;
  for (const JobRecord& j : jobs) {
    key += j.id;
    key += j.ended ? ":e" + std::to_string(j.last_seen_ms) : ":r";
    key += j.run_exit ? ":x" + std::to_string(j.run_exit->ended_ms) : "";
    key += ":k" + std::to_string(j.kernel_events.size()) + ";";
  }
  return key;
}

}  // namespace vigil::wire
