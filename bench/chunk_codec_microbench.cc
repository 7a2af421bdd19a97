// Micro benchmarks of EncodeChunk/DecodeChunk on one 2 h chunk at 1 s
// (7200 samples) of typical series shapes. Reports samples/s and bytes/sample.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "store/tsdb/chunk_codec.h"

namespace vigil::tsdb {
namespace {

constexpr int kSamples = 7200;

enum Shape { kGaugeInt = 0, kGauge3Decimals = 1, kCounter2Decimals = 2, kFloat = 3 };

std::vector<wire::Sample> MakeSeries(int shape) {
  std::mt19937_64 rng(42);
  std::vector<wire::Sample> s;
  int64_t acc = 0;
  for (int i = 0; i < kSamples; ++i) {
    double v = 0;
    switch (shape) {
      case kGaugeInt:  // GPU utilisation in %
        v = static_cast<double>(std::max<int64_t>(0, 100 - static_cast<int64_t>(rng() % 8)));
        break;
      case kGauge3Decimals:  // power in W with 3 decimals
        acc += static_cast<int64_t>(rng() % 2001) - 1000;
        v = static_cast<double>(650000 + acc) / 1000.0;
        break;
      case kCounter2Decimals:  // node_cpu_seconds_total
        acc += 95 + static_cast<int64_t>(rng() % 11);
        v = static_cast<double>(44000000 + acc) / 100.0;
        break;
      default:  // a float that is not decimal
        v = std::sin(i * 0.01) * 3.7;
    }
    s.push_back({1761955200000 + i * 1000LL, v});
  }
  return s;
}

void BM_Encode(benchmark::State& state) {
  auto series = MakeSeries(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string c = EncodeChunk(series);
    bytes = c.size();
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * kSamples);
  state.counters["bytes_per_sample"] = static_cast<double>(bytes) / kSamples;
}

void BM_Decode(benchmark::State& state) {
  std::string chunk = EncodeChunk(MakeSeries(static_cast<int>(state.range(0))));
  std::vector<wire::Sample> out;
  out.reserve(kSamples);
  for (auto _ : state) {
    out.clear();
    if (!DecodeChunk(chunk, &out).ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kSamples);
}

BENCHMARK(BM_Encode)->DenseRange(kGaugeInt, kFloat);
BENCHMARK(BM_Decode)->DenseRange(kGaugeInt, kFloat);

}  // namespace
}  // namespace vigil::tsdb

BENCHMARK_MAIN();
