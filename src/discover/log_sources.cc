#include "discover/log_sources.h"

#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>

#include "core/strings.h"
#include "discover/discover_internal.h"
#include "wire/metric_batch.h"

namespace vigil::discover {

const char* LogFormatName(LogFormat format) {
  switch (format) {
    case LogFormat::kPlain:
      return "plain";
    case LogFormat::kDockerJson:
      return "docker-json";
    case LogFormat::kCri:
      return "cri";
  }
  return "plain";
}

bool HasRunAnchor(const LogSource& source) {
  return source.writer_pid > 0 || !wire::LabelValue(source.labels, "container_id").empty();
}

namespace internal {
namespace {

bool EndsWithIgnoreCase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  s = s.substr(s.size() - suffix.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != suffix[i]) return false;
  }
  return true;
}

template <size_t N>
bool EndsWithAny(std::string_view s, const std::array<std::string_view, N>& suffixes) {
  for (std::string_view x : suffixes) {
    if (EndsWithIgnoreCase(s, x)) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 6> kLogSuffixes = {".log", ".txt",    ".out",
                                                          ".err", ".stdout", ".stderr"};
// The tailer's list (collect/logs/tailer.cc), so both agree on what is never read.
constexpr std::array<std::string_view, 14> kCompressedSuffixes = {
    ".gz", ".bz2",  ".xz", ".zst", ".zstd", ".lz4",    ".zip",
    ".z",  ".lzma", ".7z", ".tgz", ".br",   ".snappy", ".lz"};
// Files a process writes that are not text logs: journald and databases
// (binary), things people redirect stdout into that are not logs either, and
// temp files (ccache points a compiler's stdout at one for a second).
constexpr std::array<std::string_view, 22> kBinarySuffixes = {
    ".journal", ".journal~", ".db",          ".sqlite", ".sqlite3", ".wal", "-wal",  "-shm",
    "-journal", ".lock",     ".pid",         ".tar",    ".pt",      ".pth", ".ckpt", ".bin",
    ".npy",     ".parquet",  ".safetensors", ".tmp",    ".temp",    ".swp"};
constexpr std::array<std::string_view, 5> kSystemPrefixes = {
    "/dev/", "/proc/", "/sys/", "/var/log/journal/", "/run/log/journal/"};

// "1", "20240101-120000", "2024-01-01T12:00:00Z": what rotators append.
bool IsRotationSuffix(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == ':' || c == 'T' || c == 'Z')) {
      return false;
    }
  }
  return true;
}

// Path under dir (or dir itself), on a '/' boundary.
bool IsUnder(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (dir.empty() || !StartsWith(path, dir)) return false;
  return path.size() == dir.size() || path[dir.size()] == '/' || dir == "/";
}

bool Excluded(const DiscoveryOptions& o, const std::string& path) {
  if (path.empty() || path.front() != '/' || IsRotatedCompressed(path)) return true;
  if (!o.self_home.empty() && IsUnder(path, o.self_home) &&
      !(!o.run_spool_dir.empty() && IsUnder(path, o.run_spool_dir))) {
    return true;
  }
  for (const std::string& pattern : o.exclude_globs) {
    if (::fnmatch(pattern.c_str(), path.c_str(), 0) == 0) return true;
  }
  return false;
}

bool IsContainerRank(Rank r) { return r == Rank::kDocker || r == Rank::kCri; }

// Adds the labels of `from` whose names `into` lacks.
void FillLabels(wire::Labels* into, const wire::Labels& from) {
  for (const wire::Label& l : from) {
    bool present = std::any_of(into->begin(), into->end(),
                               [&](const wire::Label& x) { return x.name == l.name; });
    if (!present) into->push_back(l);
  }
}

}  // namespace

const char* RankOrigin(Rank rank) {
  switch (rank) {
    case Rank::kProcess:
      return "process";
    case Rank::kConfig:
      return "config";
    case Rank::kDocker:
      return "docker";
    case Rank::kCri:
      return "cri";
    case Rank::kVigilRun:
      return "vigil-run";
  }
  return "process";
}

std::string_view PathBasename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool LooksLikeLogName(std::string_view base) {
  if (base == "stdout" || base == "stderr" || base == "log") return true;
  return EndsWithAny(base, kLogSuffixes) && base.size() > 4;
}

bool IsRotatedNumbered(std::string_view base) {
  for (std::string_view ext : kLogSuffixes) {
    // A log extension followed only by a rotation suffix: "a.log.1" and
    // "a.txt.log.2" are rotated, "a.log.1.txt" is not.
    size_t pos = base.rfind(ext);
    while (pos != std::string_view::npos && pos > 0) {
      std::string_view rest = base.substr(pos + ext.size());
      if (rest.size() >= 2 && rest.front() == '.' && IsRotationSuffix(rest.substr(1))) {
        return true;
      }
      pos = base.rfind(ext, pos - 1);
    }
  }
  return false;
}

bool IsBinaryFileName(std::string_view path) { return EndsWithAny(path, kBinarySuffixes); }

bool IsSystemPath(std::string_view path) {
  for (std::string_view p : kSystemPrefixes) {
    if (StartsWith(path, p)) return true;
  }
  return false;
}

long ParseFdinfoFlags(std::string_view text) {
  for (std::string_view line : Split(text, '\n')) {
    if (!StartsWith(line, "flags:")) continue;
    std::string_view v = TrimSpace(line.substr(6));
    if (v.empty() || v.size() > 11) return -1;
    long flags = 0;
    for (char c : v) {
      if (c < '0' || c > '7') return -1;
      flags = flags * 8 + (c - '0');
    }
    return flags;
  }
  return -1;
}

void ScanGlobs(const std::vector<std::string>& globs, std::vector<Candidate>* out, size_t limit) {
  for (const std::string& pattern : globs) {
    glob_t g{};
    int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
    for (size_t i = 0; rc == 0 && i < g.gl_pathc && out->size() < limit; ++i) {
      struct stat st {};
      if (::stat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode)) continue;
      // "/var/log/app.log*" also matches app.log.1: the tailer reaches those
      // through app.log's rotation, and tailing both would read them twice.
      if (IsRotatedNumbered(PathBasename(g.gl_pathv[i]))) continue;
      // The real path, so a file found here and by its writer is one source.
      char real[PATH_MAX];
      if (::realpath(g.gl_pathv[i], real) == nullptr) continue;
      Candidate c;
      c.rank = Rank::kConfig;
      c.source.path = real;
      c.source.origin = RankOrigin(Rank::kConfig);
      // No process to name it: the file's own name does ("train.log" -> train),
      // so the same file has the same job whether or not its writer runs.
      std::string_view base = PathBasename(c.source.path);
      std::string_view stem = base.substr(0, base.find('.'));
      if (!stem.empty()) c.source.labels.push_back({"job", std::string(stem)});
      out->push_back(std::move(c));
    }
    ::globfree(&g);
  }
}

}  // namespace internal

bool IsRotatedCompressed(std::string_view path) {
  return internal::EndsWithAny(path, internal::kCompressedSuffixes);
}

Status ValidateDiscoveryOptions(const DiscoveryOptions& o) {
  auto absolute = [](std::string_view what, const std::string& p) -> Status {
    if (!p.empty() && p.front() != '/') {
      return InvalidArgument(std::string(what) + " must be an absolute path, got \"" + p + "\"");
    }
    return Status::Ok();
  };
  VIGIL_RETURN_IF_ERROR(absolute("proc root", o.proc_root));
  VIGIL_RETURN_IF_ERROR(absolute("docker root", o.docker_root));
  VIGIL_RETURN_IF_ERROR(absolute("pods root", o.pods_root));
  VIGIL_RETURN_IF_ERROR(absolute("Vigil home", o.self_home));
  VIGIL_RETURN_IF_ERROR(absolute("run spool dir", o.run_spool_dir));
  for (const std::string& g : o.extra_globs) {
    VIGIL_RETURN_IF_ERROR(absolute("log glob", g));
    if (g.empty()) return InvalidArgument("empty log glob");
  }
  for (const std::string& g : o.exclude_globs) {
    if (g.empty()) return InvalidArgument("empty exclude glob");
  }
  return Status::Ok();
}

namespace {

Result<std::vector<LogSource>> Discover(const DiscoveryOptions& options, DiscoveryStats* stats,
                                        internal::DiscoveryCache* cache) {
  VIGIL_RETURN_IF_ERROR(ValidateDiscoveryOptions(options));
  auto start = std::chrono::steady_clock::now();
  DiscoveryStats local;
  DiscoveryStats* st = stats != nullptr ? stats : &local;
  *st = DiscoveryStats{};

  // Highest rank first, so when max_sources is hit the most specific sources stay.
  using internal::Candidate;
  using internal::Rank;
  std::vector<Candidate> found;
  size_t limit = options.max_sources;
  internal::ScanRunSpool(options.run_spool_dir, &found, limit);
  internal::ScanPods(options.pods_root, &found, limit);
  internal::ScanDocker(options.docker_root, &found, limit,
                       cache != nullptr ? &cache->docker : nullptr);
  internal::ScanGlobs(options.extra_globs, &found, limit);
  internal::ScanProcesses(options, st, &found, limit, cache != nullptr ? &cache->proc : nullptr);

  std::map<std::string, Candidate> by_path;
  for (Candidate& c : found) {
    if (internal::Excluded(options, c.source.path)) continue;
    auto it = by_path.find(c.source.path);
    if (it == by_path.end()) {
      if (by_path.size() >= limit) {
        ++st->sources_dropped;
        continue;
      }
      by_path.emplace(c.source.path, std::move(c));
      continue;
    }
    Candidate& have = it->second;
    // Docker and CRI describe the same container (dockershim): their labels
    // combine. Otherwise the higher rank's labels alone, so a file's labels do
    // not change as its writer process comes and goes.
    if (c.rank > have.rank) std::swap(have, c);
    // Whoever names the file, its writer's start bounds its early rotations.
    if (have.source.started_ms == 0) have.source.started_ms = c.source.started_ms;
    if (internal::IsContainerRank(have.rank) && internal::IsContainerRank(c.rank)) {
      internal::FillLabels(&have.source.labels, c.source.labels);
    }
  }

  std::vector<LogSource> out;
  out.reserve(by_path.size());
  for (auto& [path, c] : by_path) {
    c.source.labels.push_back({"source", path});
    wire::NormalizeLabels(&c.source.labels);
    out.push_back(std::move(c.source));
  }
  st->elapsed_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return out;
}

}  // namespace

Result<std::vector<LogSource>> DiscoverLogSources(const DiscoveryOptions& options,
                                                  DiscoveryStats* stats) {
  return Discover(options, stats, nullptr);
}

LogSourceDiscoverer::LogSourceDiscoverer(DiscoveryOptions options)
    : options_(std::move(options)), cache_(std::make_unique<internal::DiscoveryCache>()) {}

LogSourceDiscoverer::~LogSourceDiscoverer() = default;

Result<std::vector<LogSource>> LogSourceDiscoverer::Discover(DiscoveryStats* stats) {
  return discover::Discover(options_, stats, cache_.get());
}

}  // namespace vigil::discover
