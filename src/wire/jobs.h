// JobsSnapshot: what one node knows about its jobs at one time, the payload
// of wire frame kind 4 (docs/wire.md "Jobs snapshot payload"). The same JSON
// document is the agent's job history file (<home>/data/jobs.json,
// docs/jobs.md "History") and the server's file per node, so its layout is
// owned here, in plain structs: the agent and the server convert to and from
// them, and a refactor of either cannot change the protocol by accident.
//
// Kinds (a job's kind and framework, a process's role, an event's kind) are
// strings, as in the document: a newer agent's new kind reaches an older
// server intact, and each reader maps the names it knows.
//
// The decoder reads untrusted input (anything that reaches a server's ingest
// port), so it is bounded: bytes, nesting, records, counts and string sizes
// (the constants below). It parses with nlohmann's SAX interface straight into
// these structs, so no DOM is built, unknown fields cost no memory, and too
// deep a document is refused before its nesting is followed. Lenient where a
// damaged entry should cost only itself: unknown fields are ignored, a field
// of the wrong type or out of its type's range takes its default, a job
// without an id and an event without a kind are skipped, and a list longer
// than its bound keeps its first entries (its newest, for the lists of events,
// which are oldest first). Refused whole (InvalidArgument):
// a document that is not a snapshot (not JSON, not an object, another
// version) or that breaks a bound no honest agent reaches (bytes, nesting,
// records, a node name's size).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil::wire {

// The only version there is; a decoder refuses every other one, naming it.
inline constexpr int kJobsSnapshotVersion = 1;

// Bounds the decoder enforces. Beyond these the document is refused whole:
inline constexpr size_t kMaxJobsSnapshotBytes = 8u << 20;
inline constexpr int kMaxJobsSnapshotDepth = 32;  // a snapshot itself nests 7 deep
// Jobs, processes, events, details and run exits together, counted as they
// are read (about 100 bytes of memory each): 200 ended jobs with 70
// processes and a few events each are ~20,000.
inline constexpr size_t kMaxJobsSnapshotRecords = 1u << 18;
inline constexpr size_t kMaxJobsNodeBytes = 253;  // a DNS name
// Beyond these the first ones are kept and the rest ignored:
inline constexpr size_t kMaxSnapshotJobs = 1024;  // a tracker keeps 200 ended + running
inline constexpr size_t kMaxJobProcesses = 1024;  // launchers and ranks come first
inline constexpr size_t kMaxJobEventDetails = 32;
// Beyond these the newest (last) ones are kept, as a tracker drops the oldest:
inline constexpr size_t kMaxJobKernelEvents = 32;     // as many as the tracker keeps
inline constexpr size_t kMaxNodeKernelEvents = 1024;  // a tracker keeps 256 by default
// Strings longer than this are cut at a UTF-8 boundary, except identities:
// a job whose id, or a node event whose job_id, is longer is skipped (a cut
// id could name another job).
inline constexpr size_t kMaxJobsStringBytes = 4096;  // a process's cmdline is cut at 4 KiB
// A job's uid when it is not known; a decoded uid is this or a uid_t that
// names someone, 0 to 4294967294 ((uid_t)-1 is no one).
inline constexpr int64_t kUnknownJobUid = -1;
inline constexpr int64_t kMaxJobUid = 4294967294;

// One detail of an event: "pid" 4243, "process" "python".
struct JobEventDetail {
  std::string key;
  std::string value;    // a number's JSON text when `number`
  bool number = false;  // the value is a number (readers print it bare)
  bool operator==(const JobEventDetail&) const = default;
};

// A failure or lifecycle event (docs/training-events.md). Its fields are
// written into the object of the record that holds it (KernelEventRecord).
struct JobEvent {
  std::string kind;  // "event" in JSON: "oom_killed", "xid", "traceback", ...; never "" decoded
  int64_t line = 0;  // 1-based line of the text that decided the kind
  std::vector<JobEventDetail> details;  // in print order
  bool operator==(const JobEvent&) const = default;
};

// {"time_ms","pid","event","line","details"}: what the kernel said (the OOM
// killer, an Xid), about a process when it named one.
struct KernelEventRecord {
  int64_t time_ms = 0;
  int pid = 0;  // 0 when the kernel named no process
  JobEvent event;
  bool operator==(const KernelEventRecord&) const = default;
};

// A kernel event of the node, with the job it was given to.
struct NodeKernelEventRecord {
  KernelEventRecord kernel;
  std::string job_id;  // "" for none
  bool operator==(const NodeKernelEventRecord&) const = default;
};

struct JobProcessRecord {
  int pid = 0;
  int ppid = 0;
  std::string role;  // "launcher", "rank", "helper"
  int rank = -1;     // -1: unknown
  int local_rank = -1;
  int64_t start_time_ms = 0;
  std::string cmdline;  // arguments joined by spaces
  bool operator==(const JobProcessRecord&) const = default;
};

// How a `vigil run` wrapper saw the job's command end.
struct RunExitRecord {
  int64_t ended_ms = 0;
  std::optional<int> exit_code;  // null in JSON unless it exited
  int signal = 0;                // set when a signal killed it
  std::string signal_name;       // "TERM", "KILL", ...
  bool operator==(const RunExitRecord&) const = default;
};

struct JobRecord {
  std::string id;  // stable for the job's life; never "" decoded
  std::string name;
  std::string kind;       // "training", "inference", "unknown"
  std::string framework;  // "pytorch", "tensorflow", "jax", "paddle", "mindspore", ""
  std::string launcher;   // "torchrun", "deepspeed", ... or ""
  std::string trainer;    // "transformers", "vllm", ... or ""
  int world_size = 0;
  std::string container_id;  // "" on the host
  // Who runs it (docs/wire.md "Job"): the real uid of its anchor process,
  // kUnknownJobUid when not known (unreadable, or a document of an older
  // agent), and that uid's name on its node (its decimal digits when the
  // node has no name for it, "" when the uid is unknown).
  std::string user;
  int64_t uid = kUnknownJobUid;
  std::string master_addr;
  int master_port = 0;
  int64_t start_time_ms = 0;
  int64_t first_seen_ms = 0;
  int64_t last_seen_ms = 0;
  bool ended = false;
  std::vector<JobProcessRecord> processes;
  std::optional<RunExitRecord> run_exit;         // null in JSON when there is none
  std::vector<KernelEventRecord> kernel_events;  // oldest first
  bool operator==(const JobRecord&) const = default;
};

struct JobsSnapshot {
  std::string node;  // "" in the agent's history file (it is the local node's)
  int64_t time_ms = 0;
  std::vector<JobRecord> jobs;
  std::vector<NodeKernelEventRecord> node_events;  // oldest first
  bool operator==(const JobsSnapshot&) const = default;
};

// {"version":1,"node":...,"time_ms":...,"jobs":[...],"node_events":[...]},
// every field always written, in the order docs/wire.md gives. Writes what it
// is given: what the decoder would skip or cut is the decoder's to drop.
std::string EncodeJobsSnapshot(const JobsSnapshot& snapshot);

// The snapshot in `json`, within the bounds above. InvalidArgument, with a
// message naming what is wrong, for a document that is not a snapshot or
// breaks a bound that refuses it whole.
Result<JobsSnapshot> DecodeJobsSnapshot(std::string_view json);

// What a snapshot of `jobs` says in substance: which jobs, ended or not, and
// the evidence on them (not last_seen_ms of running ones, which moves at
// every pass). Writers compare it to skip rewriting what did not change.
std::string JobsKey(const std::vector<JobRecord>& jobs);

}  // namespace vigil::wire
