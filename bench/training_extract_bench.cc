// Training metric extraction (src/parse/training/log_metrics.h) over a log
// file: time per line and samples found, for bench/RESULTS.md "Training
// metrics from logs". It runs on every stored log line, so its cost is part
// of the log path's (bench/log_pipeline_compare.py's logpipe vs logonly rows).
//
//   training_extract_bench FILE [MAX_LINES]   (default 1,000,000 lines)
//
// The lines are read into memory first; only Extract() is timed (thread CPU
// time and wall clock), over 5 rounds, median reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "parse/training/log_metrics.h"

namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [MAX_LINES]\n", argv[0]);
    return 2;
  }
  size_t max_lines = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<std::string> lines;
  for (std::string l; lines.size() < max_lines && std::getline(in, l);) lines.push_back(l);
  if (lines.empty()) {
    std::fprintf(stderr, "no lines in %s\n", argv[1]);
    return 1;
  }
  std::vector<double> cpu, wall;
  size_t samples = 0;
  for (int round = 0; round < 5; ++round) {
    vigil::parse::training::LogMetricExtractor x;
    std::vector<vigil::parse::training::MetricSample> out;
    samples = 0;
    double c0 = ThreadCpuSeconds();
    auto w0 = std::chrono::steady_clock::now();
    for (const auto& l : lines) {
      out.clear();
      x.Extract(l, &out);
      samples += out.size();
    }
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    cpu.push_back(ThreadCpuSeconds() - c0);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  double n = static_cast<double>(lines.size());
  std::printf(
      "lines: %zu\nsamples: %zu\ncpu_ns_per_line_median: %.0f\ncpu_ns_per_line_min: %.0f\n"
      "wall_ns_per_line_median: %.0f\nns_per_sample_median: %.0f\n",
      lines.size(), samples, cpu[2] / n * 1e9, cpu[0] / n * 1e9, wall[2] / n * 1e9,
      cpu[2] / static_cast<double>(samples) * 1e9);
  return 0;
}
