#include "ingest/job_store.h"

#include <algorithm>

#include "core/log.h"

namespace vigil::ingest {
namespace {

constexpr char kSuffix[] = ".jobs.json";

// A node name as a file name: hex, so no name can climb out of `dir` or
// collide with another after case folding.
std::string HexName(std::string_view node) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : node) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace

JobStore::JobStore(JobStoreOptions options)
    : options_(std::move(options)), env_(options_.env ? options_.env : Env::Default()) {
  if (options_.dir.empty() || !env_->FileExists(options_.dir)) return;
  auto files = env_->ListDir(options_.dir);
  if (!files.ok()) {
    Logf(LogLevel::kWarn, "job store: %s", files.status().ToString().c_str());
    return;
  }
  for (const std::string& name : *files) {
    if (name.size() <= sizeof(kSuffix) - 1 || !name.ends_with(kSuffix)) continue;
    const std::string path = options_.dir + "/" + name;
    auto text = env_->ReadFile(path, wire::kMaxJobsSnapshotBytes);
    auto snapshot =
        text.ok() ? wire::DecodeJobsSnapshot(*text) : Result<wire::JobsSnapshot>(text.status());
    if (!snapshot.ok() || snapshot->node.empty() || PathOf(snapshot->node) != path) {
      Logf(LogLevel::kWarn, "job store: %s skipped: %s", path.c_str(),
           snapshot.ok() ? "not this node's file" : snapshot.status().ToString().c_str());
      continue;
    }
    Entry& e = nodes_[snapshot->node];
    e.written_key = wire::JobsKey(snapshot->jobs);
    e.jobs.received_ms = snapshot->time_ms;  // the best guess of when it came
    e.jobs.snapshot = std::move(*snapshot);
  }
}

std::string JobStore::PathOf(const std::string& node) const {
  return options_.dir + "/" + HexName(node) + kSuffix;
}

Status JobStore::Receive(std::string_view payload) {
  if (payload.size() > wire::kMaxJobsSnapshotBytes) {
    return InvalidArgument("jobs snapshot of " + std::to_string(payload.size()) +
                           " bytes; at most " + std::to_string(wire::kMaxJobsSnapshotBytes));
  }
  auto snapshot = wire::DecodeJobsSnapshot(payload);
  if (!snapshot.ok()) return snapshot.status();
  if (snapshot->node.empty() || snapshot->node.size() > wire::kMaxJobsNodeBytes) {
    return InvalidArgument("jobs snapshot without a valid node name");
  }
  const int64_t now = env_->NowMillis();
  const std::string node = snapshot->node;
  const std::string key = wire::JobsKey(snapshot->jobs);
  bool write = false;
  {
    std::lock_guard lock(mu_);
    if (!nodes_.count(node) && nodes_.size() >= options_.max_nodes) {
      auto oldest =
          std::min_element(nodes_.begin(), nodes_.end(), [](const auto& a, const auto& b) {
            return a.second.jobs.received_ms < b.second.jobs.received_ms;
          });
      if (!options_.dir.empty()) (void)env_->RemoveFile(PathOf(oldest->first));
      nodes_.erase(oldest);
    }
    Entry& e = nodes_[node];
    e.jobs.snapshot = std::move(*snapshot);
    e.jobs.received_ms = now;
    write = !options_.dir.empty() &&
            (key != e.written_key || now - e.written_ms >= options_.write_interval_ms);
    if (write) {
      // Claimed before writing, so concurrent reports of one node write once.
      e.written_key = key;
      e.written_ms = now;
    }
  }
  if (!write) return Status::Ok();
  // The snapshot is kept in memory either way; a failed write is retried
  // with the node's next report.
  Status st = env_->CreateDirs(options_.dir);
  if (st.ok()) st = env_->WriteFileAtomic(PathOf(node), payload);
  if (!st.ok()) {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(node);
    if (it != nodes_.end()) it->second.written_key.clear();
    Logf(LogLevel::kWarn, "job store, node %s: %s", node.c_str(), st.ToString().c_str());
  }
  return Status::Ok();
}

std::vector<NodeJobs> JobStore::Nodes() const {
  std::lock_guard lock(mu_);
  std::vector<NodeJobs> out;
  out.reserve(nodes_.size());
  for (const auto& [node, e] : nodes_) out.push_back(e.jobs);
  return out;
}

std::map<std::string, int64_t> JobStore::LastReports() const {
  std::lock_guard lock(mu_);
  std::map<std::string, int64_t> out;
  for (const auto& [node, e] : nodes_) out.emplace(node, e.jobs.received_ms);
  return out;
}

}  // namespace vigil::ingest
