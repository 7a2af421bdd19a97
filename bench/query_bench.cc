// Range-query benchmark on the shared dataset (bench/RESULTS.md "Range
// queries"): loads an OpenMetrics file (timestamps in seconds) into a Db once,
// then times 24 h range queries at 60 s step, median of RUNS runs after one
// untimed warm-up.
//
//   query_bench FILE DB_DIR [RUNS]   (QUERY_THREADS=n: threads per selector,
//                                     default the engine's: CPUs, at most 4)
//
// DB_DIR is reused when it already holds a Db (loading 24 h takes a minute).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "query/engine.h"
#include "store/tsdb/db.h"

namespace {

using namespace vigil;  // NOLINT: a benchmark program
using Clock = std::chrono::steady_clock;

double Secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// 'name{a="x",b="y"}' -> sorted labels; values keep their escapes undone for \" and \\.
wire::Labels KeyToLabels(std::string_view key) {
  wire::Labels labels;
  size_t brace = key.find('{');
  labels.push_back({std::string(wire::kMetricNameLabel), std::string(key.substr(0, brace))});
  size_t i = brace == std::string_view::npos ? key.size() : brace + 1;
  while (i < key.size() && key[i] != '}') {
    size_t eq = key.find('=', i);
    std::string name(key.substr(i, eq - i)), value;
    for (i = eq + 2; i < key.size() && key[i] != '"'; ++i) {
      if (key[i] == '\\' && i + 1 < key.size()) ++i;
      value.push_back(key[i]);
    }
    labels.push_back({name, value});
    if (++i < key.size() && key[i] == ',') ++i;
  }
  wire::NormalizeLabels(&labels);
  return labels;
}

// The end of the series key: after the label set, quote-aware.
size_t KeyEnd(std::string_view line) {
  size_t i = line.find_first_of("{ ");
  if (i == std::string_view::npos || line[i] == ' ') return i;
  bool q = false;
  for (++i; i < line.size(); ++i) {
    if (q && line[i] == '\\') {
      ++i;
    } else if (line[i] == '"') {
      q = !q;
    } else if (line[i] == '}' && !q) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

bool Load(const char* path, tsdb::Db* db, uint64_t* samples) {
  std::ifstream in(path);
  if (!in) return false;
  std::unordered_map<std::string, wire::Series> series;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string_view l = line;
    size_t ke = KeyEnd(l);
    if (ke == std::string_view::npos) return false;
    std::string_view rest = l.substr(ke + 1);
    size_t sp = rest.find(' ');
    double v = 0;
    std::from_chars(rest.data(), rest.data() + sp, v);
    double t = 0;
    std::from_chars(rest.data() + sp + 1, rest.data() + rest.size(), t);
    auto [it, inserted] = series.try_emplace(std::string(l.substr(0, ke)));
    if (inserted) it->second.labels = KeyToLabels(it->first);
    it->second.samples.push_back({static_cast<int64_t>(t * 1000 + 0.5), v});
    ++*samples;
  }
  // One series per batch keeps memory flat; each series is in time order.
  for (auto& [k, s] : series) {
    wire::MetricBatch b;
    b.series.push_back(std::move(s));
    if (!db->Append(b).ok()) return false;
  }
  return db->Maintain().ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: query_bench FILE DB_DIR [RUNS]\n");
    return 2;
  }
  int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  tsdb::Options o;
  o.dir = argv[2];
  o.retention_ms = 100LL * 365 * 86'400'000;  // the dataset is older than the raw retention
  bool fresh = !Env::Default()->FileExists(o.dir + "/catalog.db");
  auto db = tsdb::Db::Open(o);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    return 1;
  }
  if (fresh) {
    uint64_t n = 0;
    auto t0 = Clock::now();
    if (!Load(argv[1], db->get(), &n)) {
      std::fprintf(stderr, "cannot load %s\n", argv[1]);
      return 1;
    }
    std::printf("loaded: %llu samples in %.1f s\n", static_cast<unsigned long long>(n),
                Secs(t0, Clock::now()));
  }
  tsdb::DbStats st = (*db)->Stats();
  int64_t start = st.min_time_ms / 60'000 * 60'000;
  int64_t end = start + 24 * 3600 * 1000;
  std::printf("range: %lld..%lld step 60 s, runs %d\n", static_cast<long long>(start / 1000),
              static_cast<long long>(end / 1000), runs);
  query::EngineOptions eo;
  if (const char* t = std::getenv("QUERY_THREADS")) eo.select_threads = std::atoi(t);
  query::Engine engine(db->get(), eo);
  const char* queries[] = {"max by (gpu) (DCGM_FI_DEV_GPU_UTIL)",
                           "sum by (mode) (rate(node_cpu_seconds_total[1m]))"};
  for (const char* q : queries) {
    std::vector<double> times;
    size_t nseries = 0, points = 0;
    // One untimed warm-up, as query_compare.sh gives the peers.
    if (!engine.Range(q, start, end, 60'000).ok()) return 1;
    for (int i = 0; i < runs; ++i) {
      auto t0 = Clock::now();
      auto r = engine.Range(q, start, end, 60'000);
      times.push_back(Secs(t0, Clock::now()));
      if (!r.ok()) {
        std::fprintf(stderr, "%s: %s\n", q, r.status().ToString().c_str());
        return 1;
      }
      nseries = r->series.size();
      points = 0;
      for (const auto& s : r->series) points += s.points.size();
    }
    std::sort(times.begin(), times.end());
    std::printf("query: %s\n  median_s: %.4f  min_s: %.4f  series: %zu  points: %zu\n", q,
                times[times.size() / 2], times.front(), nseries, points);
  }
  return (*db)->Close().ok() ? 0 : 1;
}
