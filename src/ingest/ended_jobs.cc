#include "ingest/ended_jobs.h"

#include <algorithm>

namespace vigil::ingest {

void EndedJobs::Note(const wire::JobsSnapshot& snapshot, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!nodes_.count(snapshot.node) && nodes_.size() >= options_.max_nodes) {
    auto oldest = std::min_element(nodes_.begin(), nodes_.end(), [](const auto& a, const auto& b) {
      return a.second.noted_ms < b.second.noted_ms;
    });
    nodes_.erase(oldest);
  }
  Node& node = nodes_[snapshot.node];
  node.noted_ms = now_ms;
  node.running.clear();
  std::map<std::string, Job> jobs;
  for (const wire::JobRecord& j : snapshot.jobs) {
    if (!j.ended) {
      node.running.push_back(j.name);
      continue;
    }
    if (j.name.empty()) continue;  // no job label to find its series by
    auto known = node.jobs.find(j.id);
    if (known != node.jobs.end()) {
      jobs.emplace(j.id, known->second);
      continue;
    }
    Job job;
    job.name = j.name;
    job.end_ms = j.run_exit && j.run_exit->ended_ms > 0 ? j.run_exit->ended_ms : j.last_seen_ms;
    job.seen_ended_ms = now_ms;
    // Ended long before we heard (a server restart, an outage): already faded.
    job.done = job.end_ms + options_.max_age_ms < now_ms;
    jobs.emplace(j.id, std::move(job));
  }
  node.jobs = std::move(jobs);  // jobs the snapshot no longer lists are forgotten
}

std::vector<EndedJob> EndedJobs::TakeDue(const std::string& node_name, int64_t now_ms) {
  std::vector<EndedJob> out;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(node_name);
  if (it == nodes_.end()) return out;
  Node& node = it->second;
  for (auto& [id, job] : node.jobs) {
    if (job.done || job.seen_ended_ms + options_.grace_ms > now_ms) continue;
    job.done = true;
    // A rerun under the same name writes the same series, unless they carry runs.
    bool running =
        std::find(node.running.begin(), node.running.end(), job.name) != node.running.end();
    out.push_back({node_name, id, job.name, job.end_ms, running});
  }
  return out;
}

}  // namespace vigil::ingest
