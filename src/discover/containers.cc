// Container and `vigil run` discovery: docker json-file logs, CRI pod logs,
// and the vigil-run spool. All of it is directory listings plus one small JSON
// file per container, so it is cheap next to the /proc scan.
#include <sys/stat.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/strings.h"
#include "discover/discover_internal.h"
#include "discover/run_records.h"

namespace vigil::discover::internal {
namespace {

using nlohmann::json;

// config.v2.json is a few KiB; a bigger one is not what we think it is.
constexpr size_t kMaxContainerConfigBytes = 4u << 20;
constexpr size_t kMaxRunSidecarBytes = 64u << 10;
constexpr size_t kShortIdLength = 12;

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> ListDirOrEmpty(const std::string& dir) {
  auto names = Env::Default()->ListDir(dir);
  return names.ok() ? std::move(*names) : std::vector<std::string>{};
}

// Parses a small JSON file; nullopt when missing, too big or malformed.
std::optional<json> ReadJsonFile(const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > max_bytes) {
    return std::nullopt;
  }
  auto text = Env::Default()->ReadFile(path, max_bytes + 1);
  if (!text.ok() || text->size() > max_bytes) return std::nullopt;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

// A string member of an object, or "" (never throws on a wrong type).
std::string StringAt(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

const json* ObjectAt(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_object()) return nullptr;
  return &*it;
}

void AddLabel(wire::Labels* labels, std::string name, std::string value) {
  if (value.size() > wire::kMaxLabelBytes) value.resize(wire::kMaxLabelBytes);
  labels->push_back({std::move(name), std::move(value)});
}

// Labels from docker's config.v2.json: the container name, image, and the
// compose service or Kubernetes names that say what the container is for.
void DockerLabels(const json& cfg, wire::Labels* labels) {
  std::string name = StringAt(cfg, "Name");
  if (!name.empty() && name.front() == '/') name.erase(0, 1);
  const json* config = ObjectAt(cfg, "Config");
  std::string image = config != nullptr ? StringAt(*config, "Image") : "";
  const json* clabels = config != nullptr ? ObjectAt(*config, "Labels") : nullptr;
  auto label = [&](const char* key) { return clabels ? StringAt(*clabels, key) : ""; };

  // dockershim names containers "k8s_<container>_<pod>_..."; its labels are clearer.
  std::string k8s_container = label("io.kubernetes.container.name");
  std::string job = label("com.docker.compose.service");
  if (!k8s_container.empty()) {
    name = k8s_container;
    AddLabel(labels, "pod", label("io.kubernetes.pod.name"));
    AddLabel(labels, "namespace", label("io.kubernetes.pod.namespace"));
  }
  if (job.empty()) job = name;
  AddLabel(labels, "container", name);
  AddLabel(labels, "image", image);
  AddLabel(labels, "job", job);
}

// "<n>.log" with n decimal; -1 otherwise.
long PodLogNumber(std::string_view name) {
  if (!EndsWith(name, ".log")) return -1;
  std::string_view digits = name.substr(0, name.size() - 4);
  if (digits.empty() || digits.size() > 9) return -1;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
  }
  return static_cast<long>(*ParseInt64(digits));
}

bool IsRunId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

// The labels config.v2.json gives, from the cache while the file is unchanged.
wire::Labels ConfigLabels(const std::string& config_path, const std::string& id,
                          DockerConfigCache* cache) {
  wire::Labels labels;
  struct stat st {};
  bool present = ::stat(config_path.c_str(), &st) == 0;
  int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  DockerConfigCacheEntry* entry = nullptr;
  if (cache != nullptr && present) {
    entry = &cache->by_id[id];
    entry->seen_round = cache->round;
    if (entry->mtime_ns == mtime_ns && entry->size == static_cast<int64_t>(st.st_size) &&
        entry->ino == static_cast<uint64_t>(st.st_ino)) {
      return entry->labels;
    }
  }
  if (!present) return labels;
  if (cache != nullptr) ++cache->parses;
  // A malformed config still leaves a log worth tailing; it is only less labelled.
  if (auto cfg = ReadJsonFile(config_path, kMaxContainerConfigBytes)) DockerLabels(*cfg, &labels);
  if (entry != nullptr)
    *entry = {mtime_ns, static_cast<int64_t>(st.st_size), st.st_ino, labels, cache->round};
  return labels;
}

void ScanDockerRoot(const std::string& docker_root, std::vector<Candidate>* out, size_t limit,
                    DockerConfigCache* cache) {
  for (const std::string& id : ListDirOrEmpty(docker_root)) {
    if (out->size() >= limit) return;
    if (id.empty() || id.front() == '.') continue;
    std::string dir = JoinPath(docker_root, id);
    std::string log = JoinPath(dir, id + "-json.log");
    if (!IsRegularFile(log)) continue;  // another log driver, or not a container
    Candidate c;
    c.rank = Rank::kDocker;
    c.source.path = log;
    c.source.format = LogFormat::kDockerJson;
    c.source.origin = RankOrigin(Rank::kDocker);
    AddLabel(&c.source.labels, "container_id", id.substr(0, kShortIdLength));
    for (wire::Label& l : ConfigLabels(JoinPath(dir, "config.v2.json"), id, cache)) {
      c.source.labels.push_back(std::move(l));
    }
    out->push_back(std::move(c));
  }
}

}  // namespace

void ScanDocker(const std::string& docker_root, std::vector<Candidate>* out, size_t limit,
                DockerConfigCache* cache) {
  if (docker_root.empty()) return;
  if (cache != nullptr) ++cache->round;
  ScanDockerRoot(docker_root, out, limit, cache);
  if (cache != nullptr) {
    uint64_t round = cache->round;
    std::erase_if(cache->by_id, [&](const auto& kv) { return kv.second.seen_round != round; });
  }
}

void ScanPods(const std::string& pods_root, std::vector<Candidate>* out, size_t limit) {
  if (pods_root.empty()) return;
  for (const std::string& pod_dir : ListDirOrEmpty(pods_root)) {
    // "<namespace>_<pod>_<uid>": Kubernetes names cannot hold '_', so the
    // first and last fields are safe and anything between is the pod.
    size_t first = pod_dir.find('_');
    size_t last = pod_dir.rfind('_');
    if (first == std::string::npos || first == last || first == 0) continue;
    std::string ns = pod_dir.substr(0, first);
    std::string pod = pod_dir.substr(first + 1, last - first - 1);
    std::string pod_path = JoinPath(pods_root, pod_dir);
    for (const std::string& container : ListDirOrEmpty(pod_path)) {
      if (out->size() >= limit) return;
      std::string cdir = JoinPath(pod_path, container);
      // The highest n is the live file; lower ones are the restarts' and
      // rotation's leftovers. "0.log.20240101-120000" and ".gz" never parse.
      long best = -1;
      std::string best_name;
      for (const std::string& f : ListDirOrEmpty(cdir)) {
        long n = PodLogNumber(f);
        if (n > best && IsRegularFile(JoinPath(cdir, f))) {
          best = n;
          best_name = f;
        }
      }
      if (best < 0) continue;
      Candidate c;
      c.rank = Rank::kCri;
      c.source.path = JoinPath(cdir, best_name);
      c.source.format = LogFormat::kCri;
      // dockershim links n.log to the container's json-file log: tail that
      // file, once, in docker's format (the docker scan finds it too).
      char real[PATH_MAX];
      if (::realpath(c.source.path.c_str(), real) != nullptr && EndsWith(real, "-json.log") &&
          c.source.path != real) {
        c.source.path = real;
        c.source.format = LogFormat::kDockerJson;
      }
      c.source.origin = RankOrigin(Rank::kCri);
      AddLabel(&c.source.labels, "namespace", ns);
      AddLabel(&c.source.labels, "pod", pod);
      AddLabel(&c.source.labels, "container", container);
      out->push_back(std::move(c));
    }
  }
}

void ScanRunSpool(const std::string& spool_dir, std::vector<Candidate>* out, size_t limit) {
  if (spool_dir.empty()) return;
  constexpr std::string_view kStderrSuffix = ".stderr.log";
  for (const std::string& f : ListDirOrEmpty(spool_dir)) {
    if (out->size() >= limit) return;
    // "<name>.<id>.log" (stdout, or both streams from an older `vigil run`)
    // and "<name>.<id>.stderr.log"; the id has no dots, the name may.
    if (f.empty() || f.front() == '.' || !EndsWith(f, ".log")) continue;
    const bool stderr_file = EndsWith(f, kStderrSuffix);
    std::string stem = f.substr(0, f.size() - (stderr_file ? kStderrSuffix.size() : 4));
    size_t dot = stem.rfind('.');
    if (dot == std::string::npos || dot == 0 || !IsRunId(stem.substr(dot + 1))) continue;
    std::string path = JoinPath(spool_dir, f);
    if (!IsRegularFile(path)) continue;
    std::string job = stem.substr(0, dot);
    bool split = stderr_file;
    // The sidecar's name is authoritative: the file name is a sanitized copy.
    int writer = 0;
    if (auto meta = ReadJsonFile(JoinPath(spool_dir, stem + ".json"), kMaxRunSidecarBytes)) {
      std::string name = StringAt(*meta, "name");
      if (!name.empty()) job = name;
      split = split || StringAt(*meta, "streams") == "split";
      // The command's pid (its job run names the file's lines; the tracker
      // knows a run for a while after it ended, as its stderr may be found
      // only then).
      auto pid = meta->find("pid");
      if (pid != meta->end() && pid->is_number_integer() && pid->get<int64_t>() > 0 &&
          pid->get<int64_t>() <= INT32_MAX) {
        writer = static_cast<int>(pid->get<int64_t>());
      }
    }
    Candidate c;
    c.rank = Rank::kVigilRun;
    c.source.path = path;
    c.source.format = LogFormat::kPlain;
    c.source.origin = RankOrigin(Rank::kVigilRun);
    c.source.writer_pid = writer;
    AddLabel(&c.source.labels, "job", job);
    if (split) AddLabel(&c.source.labels, "stream", stderr_file ? "stderr" : "stdout");
    out->push_back(std::move(c));
  }
}

}  // namespace vigil::discover::internal

namespace vigil::discover {

std::vector<RunRecord> ReadRunRecords(const std::string& spool_dir, size_t limit) {
  std::vector<RunRecord> out;
  if (spool_dir.empty()) return out;
  auto int_at = [](const internal::json& obj, const char* key, int64_t* v) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_number_integer()) return false;
    *v = it->get<int64_t>();
    return true;
  };
  for (const std::string& f : internal::ListDirOrEmpty(spool_dir)) {
    if (out.size() >= limit) break;
    if (f.empty() || f.front() == '.' || !EndsWith(f, ".json")) continue;
    auto meta = internal::ReadJsonFile(JoinPath(spool_dir, f), internal::kMaxRunSidecarBytes);
    if (!meta) continue;
    RunRecord r;
    struct stat st {};
    if (::stat(JoinPath(spool_dir, f).c_str(), &st) == 0) r.file_uid = st.st_uid;
    int64_t v = 0;
    r.name = internal::StringAt(*meta, "name");
    if (auto cmd = meta->find("cmd"); cmd != meta->end() && cmd->is_array()) {
      for (const auto& arg : *cmd) {
        if (!arg.is_string() || r.cmdline.size() >= 4096) continue;
        if (!r.cmdline.empty()) r.cmdline.push_back(' ');
        r.cmdline += arg.get<std::string>();
      }
      if (r.cmdline.size() > 4096) r.cmdline.resize(4096);
    }
    if (!int_at(*meta, "pid", &v) || v <= 0 || v > INT32_MAX) continue;
    r.pid = static_cast<int>(v);
    if (int_at(*meta, "started_ms", &v)) r.started_ms = v;
    if (int_at(*meta, "ended_ms", &v)) {
      r.ended = true;
      r.ended_ms = v;
    }
    if (int_at(*meta, "exit_code", &v) && v >= INT32_MIN && v <= INT32_MAX) {
      r.exit_code = static_cast<int>(v);
    }
    if (int_at(*meta, "signal", &v) && v > 0 && v < 128) r.signal = static_cast<int>(v);
    r.signal_name = internal::StringAt(*meta, "signal_name").substr(0, 16);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace vigil::discover
