// Log template mining (src/diagnose/log_templates.h) over a log file: lines
// per second, the miner's memory and the templates found, for
// bench/RESULTS.md "Issue 16: log template mining".
//
//   log_templates_bench FILE [MAX_LINES] [ROUNDS]   (default: all lines, 3 rounds)
//   log_templates_bench --distinct N [ROUNDS]
//   log_templates_bench --store DIR [RUNS]          (default 5 runs)
//
// --distinct mines N generated lines that are all different templates (eight
// words of letters each, no two lines sharing one): the worst case, where
// the bounds (1000 templates, 4 MiB) evict on every line.
//
// --store opens a log store built by `logstore_bench ingest FILE DIR` (job
// "train", lines 37 ms apart ending at ingest time) and times what an alert
// at the newest line costs: LogTemplatesFor with the default window (5 min,
// baseline 15 min, at most 20,000 lines each), reading included; median of
// RUNS (the first one, on a freshly opened store, reported apart).
//
// The lines are read into memory first. Each round mines them with a fresh
// miner: the first quarter as the baseline, the rest as the window, times
// 37 ms apart (as genlog.py's own); then ranks them. Only Add() is timed
// (wall clock and thread CPU time); the median round is reported. Memory:
// the miner's own counted bytes (its peak, sampled every 4096 lines) and the
// process's RSS after mining less before (the miner's real heap, allocator
// included).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "diagnose/log_templates.h"

namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Resident set size now, from /proc/self/statm (pages).
long RssBytes() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * 4096;
}

// Eight letter-only words, different for every line and position.
std::string DistinctLine(size_t i) {
  std::string line;
  for (size_t j = 0; j < 8; ++j) {
    if (j > 0) line += ' ';
    line += "w";
    for (size_t v = i * 8 + j;; v /= 26) {
      line += static_cast<char>('a' + v % 26);
      if (v < 26) break;
    }
  }
  return line;
}

int StoreMode(const char* dir, int runs) {
  using namespace vigil;
  logstore::Options o;
  o.dir = dir;
  o.retention_days = 0;
  o.background_maintenance = false;
  auto store = logstore::LogStore::Open(o);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  const std::vector<logstore::LabelMatcher> job = {{logstore::MatchType::kEqual, "job", "train"}};
  logstore::LogQuery newest;
  newest.matchers = job;
  newest.limit = 1;
  auto last = (*store)->Query(newest);
  if (!last.ok() || last->entries.empty()) {
    std::fprintf(stderr, "no lines of job train in %s\n", dir);
    return 1;
  }
  const int64_t at_ms = last->entries[0].time_ns / 1'000'000;
  std::vector<double> ms;
  diagnose::LogTemplateSummary s;
  for (int r = 0; r < runs; ++r) {
    const auto w0 = std::chrono::steady_clock::now();
    auto result = diagnose::LogTemplatesFor(**store, job, at_ms);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count());
    if (!result.ok()) {
      std::fprintf(stderr, "mine: %s\n", result.status().ToString().c_str());
      return 1;
    }
    s = std::move(*result);
  }
  const double first = ms[0];
  std::sort(ms.begin(), ms.end());
  std::printf(
      "store_lines: %llu\nbaseline_lines: %llu\nwindow_lines: %llu\ntemplates: %zu\n"
      "read_capped: %d\nfirst_run_ms: %.1f\nmedian_ms: %.1f\n",
      static_cast<unsigned long long>((*store)->Stats().lines),
      static_cast<unsigned long long>(s.totals.baseline_lines),
      static_cast<unsigned long long>(s.totals.window_lines), s.window_templates,
      s.read_capped ? 1 : 0, first, ms[ms.size() / 2]);
  return (*store)->Close().ok() ? 0 : 1;
}

struct Round {
  double wall = 0, cpu = 0;
  size_t peak_bytes = 0;
  long rss_delta = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace vigil::diagnose;
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s FILE [MAX_LINES] [ROUNDS] | --distinct N [ROUNDS] | --store DIR [RUNS]\n",
        argv[0]);
    return 2;
  }
  if (std::string(argv[1]) == "--store" && argc > 2) {
    return StoreMode(argv[2], argc > 3 ? std::max(1, std::atoi(argv[3])) : 5);
  }
  const bool distinct = std::string(argv[1]) == "--distinct";
  const size_t max_lines = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : SIZE_MAX;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  std::vector<std::string> lines;
  if (distinct) {
    for (size_t i = 0; i < max_lines; ++i) lines.push_back(DistinctLine(i));
  } else {
    std::ifstream in(argv[1], std::ios::binary);
    for (std::string l; lines.size() < max_lines && std::getline(in, l);) lines.push_back(l);
  }
  if (lines.empty() || rounds < 1) {
    std::fprintf(stderr, "no lines in %s\n", argv[1]);
    return 1;
  }
  const int64_t t0 = int64_t{1741946400000};  // genlog's 2025-03-14 10:00:00
  const size_t baseline = lines.size() / 4;
  std::vector<Round> results;
  LogTemplateSummary summary;
  for (int r = 0; r < rounds; ++r) {
    Round round;
    const long rss0 = RssBytes();
    {
      LogTemplateMiner miner;
      const double c0 = ThreadCpuSeconds();
      const auto w0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i == baseline) miner.StartWindow();
        miner.Add(lines[i], t0 + static_cast<int64_t>(i) * 37);
        if ((i & 4095) == 0) round.peak_bytes = std::max(round.peak_bytes, miner.MemoryBytes());
      }
      round.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      round.cpu = ThreadCpuSeconds() - c0;
      round.peak_bytes = std::max(round.peak_bytes, miner.MemoryBytes());
      round.rss_delta = RssBytes() - rss0;
      summary = RankTemplates(miner, 20);
    }
    results.push_back(round);
  }
  std::vector<Round> by_wall = results;
  std::sort(by_wall.begin(), by_wall.end(),
            [](const Round& a, const Round& b) { return a.wall < b.wall; });
  const Round& med = by_wall[by_wall.size() / 2];
  const double n = static_cast<double>(lines.size());
  const LogTemplateTotals& t = summary.totals;
  std::printf(
      "lines: %zu\nrounds: %d\nlines_per_s_median: %.0f\nwall_s_median: %.3f\n"
      "cpu_ns_per_line_median: %.0f\nminer_bytes_peak: %zu\nrss_delta_bytes: %ld\n"
      "templates: %llu\nwindow_templates: %zu\ntruncated_lines: %llu\nevicted_templates: %llu\n",
      lines.size(), rounds, n / med.wall, med.wall, med.cpu / n * 1e9, med.peak_bytes,
      med.rss_delta, static_cast<unsigned long long>(t.templates), summary.window_templates,
      static_cast<unsigned long long>(t.truncated_lines),
      static_cast<unsigned long long>(t.evicted_templates));
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("round %zu: %.0f lines/s, peak %zu bytes, rss delta %ld\n", i, n / results[i].wall,
                results[i].peak_bytes, results[i].rss_delta);
  }
  std::printf("top templates:\n");
  for (const LogTemplate& tpl : summary.templates) {
    std::printf("  %-5s %s %9llu  %s\n", TemplateSeverityName(tpl.severity),
                tpl.is_new ? "new" : "   ", static_cast<unsigned long long>(tpl.count),
                tpl.text.substr(0, 150).c_str());
  }
  return 0;
}
