// Zero-config log source discovery: which files on this node hold logs worth
// tailing, in which format, and under which labels. Runs every few seconds on
// the agent; the tailer (collect/logs) starts, keeps or stops tailing by path.
//
// Where sources come from (docs/discovery.md has the full rules and limits):
//   - processes: stdout/stderr redirected to a regular file, and log-named
//     files a process holds open for writing (/proc/<pid>/fd, fdinfo);
//   - docker json-file logs, labelled from each container's config.v2.json;
//   - Kubernetes/CRI pod logs under /var/log/pods (the newest n.log only);
//   - files written by `vigil run` into $VIGIL_HOME/spool/run;
//   - extra globs from the config.
// Exclude globs, Vigil's own state dir and compressed rotations are never
// tailed. When several origins find one path, the most specific wins
// (vigil-run > cri > docker > config > process).
//
// Thread safety: DiscoverLogSources keeps no state; call it from any thread.
// A LogSourceDiscoverer is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "wire/log_batch.h"

namespace vigil::discover {

enum class LogFormat { kPlain, kDockerJson, kCri };
const char* LogFormatName(LogFormat format);  // "plain", "docker-json", "cri"

struct LogSource {
  std::string path;  // absolute path of the file to tail
  LogFormat format = LogFormat::kPlain;
  // Sorted by name, no empty values. Names used: job, container, container_id,
  // image, pod, namespace, source (= path), stream, and run (the job run's id,
  // added by the log agent). Never pids: they change.
  wire::Labels labels;
  std::string origin;  // "process", "docker", "cri", "config", "vigil-run"
  // Unix epoch ms the earliest process found writing it started; 0 when no
  // writer was seen (origins other than "process"). The tailer reads the
  // file's generations rotated away since then, before discovery saw it.
  int64_t started_ms = 0;
  // The process writing it, for the log agent to ask which job run it
  // belongs to (the `run` label): the earliest writer ("process"), the
  // command of a `vigil run` that still runs ("vigil-run"), else 0. Never a
  // label: pids are reused.
  int writer_pid = 0;
  bool operator==(const LogSource&) const = default;
};

// What can tie a source to a job run: its writer's pid, or the container
// whose log it is (the `container_id` label: a job knows the container it
// runs in). Without either no run is looked for.
bool HasRunAnchor(const LogSource& source);

struct DiscoveryOptions {
  std::string proc_root = "/proc";                         // "" skips process discovery
  std::string docker_root = "/var/lib/docker/containers";  // "" skips docker
  std::string pods_root = "/var/log/pods";                 // "" skips CRI pods
  std::vector<std::string> extra_globs;  // absolute glob(3) patterns: "/data/runs/*/train.log"
  // fnmatch(3) patterns without FNM_PATHNAME: "*" also spans '/', so
  // "/data/*.log" excludes /data/a/b/c.log too. Matched against the path.
  std::vector<std::string> exclude_globs;
  // Vigil's own state dir: never tail files under it, except run_spool_dir.
  std::string self_home;
  std::string run_spool_dir;  // $VIGIL_HOME/spool/run: files written by `vigil run`

  // Work bounds: discovery must stay cheap on a node with many processes.
  size_t max_fds_per_process = 4096;
  size_t max_sources = 10000;
};

// What one discovery round did, for `vigil status` and for tests. The fd
// counters cover the processes looked at in full this round (with
// LogSourceDiscoverer, a warm round looks at few).
struct DiscoveryStats {
  size_t pids_scanned = 0;
  size_t pids_cached = 0;  // answered from LogSourceDiscoverer's cache
  size_t pids_denied = 0;  // fd table unreadable (another user's process, EACCES)
  size_t fds_scanned = 0;
  size_t fd_tables_truncated = 0;    // processes with more fds than max_fds_per_process
  size_t deleted_files_skipped = 0;  // written but unlinked: readable only through /proc
  size_t sources_dropped = 0;        // found beyond max_sources
  int64_t elapsed_us = 0;
};

// Sorted by path, one entry per path. Fails only on invalid options (a
// relative root or glob); an unreadable root (no docker here, not root) just
// contributes nothing.
Result<std::vector<LogSource>> DiscoverLogSources(const DiscoveryOptions& options,
                                                  DiscoveryStats* stats = nullptr);

namespace internal {
struct DiscoveryCache;
}

// DiscoverLogSources with memory between rounds: a process is looked at in
// full only when it is new, its fd count changed, a file it held moved, or
// every 10th round; other rounds cost it two small reads. A container's
// config.v2.json is parsed again only when it changed. Use this on the
// agent's discovery loop; a log file opened late by a long-lived process is
// then found within 10 rounds (docs/discovery.md "Cost").
//
// Thread safety: not thread-safe; one thread calls Discover.
class LogSourceDiscoverer {
 public:
  explicit LogSourceDiscoverer(DiscoveryOptions options);
  ~LogSourceDiscoverer();
  LogSourceDiscoverer(const LogSourceDiscoverer&) = delete;
  LogSourceDiscoverer& operator=(const LogSourceDiscoverer&) = delete;

  Result<std::vector<LogSource>> Discover(DiscoveryStats* stats = nullptr);
  const DiscoveryOptions& options() const { return options_; }

 private:
  DiscoveryOptions options_;
  std::unique_ptr<internal::DiscoveryCache> cache_;
};

// Checks what DiscoverLogSources checks first, so a config loader can report a
// bad glob at load time.
Status ValidateDiscoveryOptions(const DiscoveryOptions& options);

// True for compressed rotations, which are never tailed: names ending in .gz,
// .bz2, .xz, .zst, .zip, .lz4 (so "x.log.1.gz" too), and the rarer ones the
// tailer also refuses (.zstd .Z .lzma .7z .tgz .br .snappy .lz), any case.
bool IsRotatedCompressed(std::string_view path);

}  // namespace vigil::discover
