// tsdb_codec_bench: measures the chunk codec (and, when built with the engine,
// Db ingest) on an OpenMetrics file such as the one from
// /work/shared/bench-data/gen_tsdb_dataset.py.
//
//   tsdb_codec_bench codec FILE [--window-s 7200] [--by-family]
//   tsdb_codec_bench db FILE DIR       (only when built with vigil_tsdb)
//
// Prints one "key: value" per line so scripts can pick numbers out; all
// timings are single-threaded wall time on this core.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/tsdb/chunk_codec.h"
#include "wire/metric_batch.h"
#ifdef VIGIL_BENCH_WITH_DB
#include "core/env.h"
#include "ingest/ingester.h"
#include "store/tsdb/db.h"
#include "wire/frame.h"
#endif

namespace vigil::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A read-only view of the whole file; the dataset is a few GB, so mmap avoids
// holding a second copy.
class MappedFile {
 public:
  bool Open(const char* path) {
    int fd = ::open(path, O_RDONLY);
    if (fd < 0) return false;
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        return false;
      }
      ::madvise(p, size_, MADV_SEQUENTIAL);
      data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return true;
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  std::string_view view() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

struct ParsedLine {
  std::string_view series;  // name{labels}, the grouping key
  double value = 0;
  int64_t t_ms = 0;
  bool has_time = false;
};

bool ParseValue(std::string_view s, double* v) {
  if (s == "+Inf" || s == "Inf") {
    *v = INFINITY;
    return true;
  }
  if (s == "-Inf") {
    *v = -INFINITY;
    return true;
  }
  if (s == "NaN") {
    *v = NAN;
    return true;
  }
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// OpenMetrics timestamps are seconds, possibly with a fraction.
bool ParseSecondsToMs(std::string_view s, int64_t* ms) {
  int64_t sec = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), sec);
  if (r.ec != std::errc()) return false;
  int64_t frac_ms = 0;
  if (r.ptr != s.data() + s.size()) {
    if (*r.ptr != '.') return false;
    int64_t scale = 100;
    for (const char* p = r.ptr + 1; p < s.data() + s.size(); ++p) {
      if (*p < '0' || *p > '9') return false;
      frac_ms += (*p - '0') * scale;
      scale /= 10;
    }
    if (sec < 0) frac_ms = -frac_ms;
  }
  *ms = sec * 1000 + frac_ms;
  return true;
}

// `name{labels} value [timestamp]`; label values may hold spaces and escaped
// quotes, so the end of the label set is found quote-aware.
bool ParseLine(std::string_view line, ParsedLine* out) {
  size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
  if (i < line.size() && line[i] == '{') {
    bool in_quote = false;
    for (++i; i < line.size(); ++i) {
      char c = line[i];
      if (in_quote && c == '\\') {
        ++i;
      } else if (c == '"') {
        in_quote = !in_quote;
      } else if (c == '}' && !in_quote) {
        break;
      }
    }
    if (i >= line.size()) return false;
    ++i;
  }
  out->series = line.substr(0, i);
  if (i >= line.size() || line[i] != ' ') return false;
  std::string_view rest = line.substr(i + 1);
  size_t sp = rest.find(' ');
  if (!ParseValue(rest.substr(0, sp), &out->value)) return false;
  out->has_time = sp != std::string_view::npos;
  if (out->has_time && !ParseSecondsToMs(rest.substr(sp + 1), &out->t_ms)) return false;
  return true;
}

struct SeriesData {
  std::string key;
  std::vector<wire::Sample> samples;
};

struct Dataset {
  std::vector<SeriesData> series;
  uint64_t samples = 0;
  double parse_s = 0;
};

bool Load(const char* path, Dataset* ds) {
  MappedFile f;
  if (!f.Open(path)) {
    std::fprintf(stderr, "cannot open %s\n", path);
    return false;
  }
  auto start = Clock::now();
  std::unordered_map<std::string_view, size_t> index;
  std::vector<std::string_view> keys;
  std::string_view data = f.view();
  size_t last = SIZE_MAX;
  std::string_view last_key;
  uint64_t line_no = 0;
  while (!data.empty()) {
    size_t nl = data.find('\n');
    std::string_view line = data.substr(0, nl);
    data.remove_prefix(nl == std::string_view::npos ? data.size() : nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    ParsedLine p;
    if (!ParseLine(line, &p) || !p.has_time) {
      std::fprintf(stderr, "%s:%llu: cannot parse\n", path,
                   static_cast<unsigned long long>(line_no));
      return false;
    }
    // Consecutive lines are usually the same series: skip the hash lookup.
    if (last == SIZE_MAX || p.series != last_key) {
      auto [it, inserted] = index.emplace(p.series, ds->series.size());
      if (inserted) ds->series.push_back({std::string(p.series), {}});
      last = it->second;
      last_key = p.series;
    }
    ds->series[last].samples.push_back({p.t_ms, p.value});
    ++ds->samples;
  }
  ds->parse_s = Seconds(start, Clock::now());
  for (auto& s : ds->series) {
    std::stable_sort(s.samples.begin(), s.samples.end(),
                     [](const wire::Sample& a, const wire::Sample& b) { return a.t_ms < b.t_ms; });
  }
  return true;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

struct Chunk {
  size_t series;
  size_t begin, end;  // sample range in the series
};

std::vector<Chunk> CutChunks(const Dataset& ds, int64_t window_ms) {
  std::vector<Chunk> chunks;
  for (size_t s = 0; s < ds.series.size(); ++s) {
    const auto& v = ds.series[s].samples;
    size_t b = 0;
    while (b < v.size()) {
      int64_t w = FloorDiv(v[b].t_ms, window_ms);
      size_t e = b + 1;
      while (e < v.size() && FloorDiv(v[e].t_ms, window_ms) == w) ++e;
      chunks.push_back({s, b, e});
      b = e;
    }
  }
  return chunks;
}

bool SameSample(const wire::Sample& a, const wire::Sample& b) {
  if (a.t_ms != b.t_ms) return false;
  if (std::isnan(a.value)) return std::isnan(b.value);
  return std::bit_cast<uint64_t>(a.value) == std::bit_cast<uint64_t>(b.value);
}

std::string FamilyOf(const std::string& key) { return key.substr(0, key.find('{')); }

int RunCodec(const char* path, int64_t window_s, bool by_family) {
  Dataset ds;
  if (!Load(path, &ds)) return 1;
  std::vector<Chunk> chunks = CutChunks(ds, window_s * 1000);
  std::printf("file: %s\nseries: %zu\nsamples: %llu\nchunks: %zu\nwindow_s: %lld\n", path,
              ds.series.size(), static_cast<unsigned long long>(ds.samples), chunks.size(),
              static_cast<long long>(window_s));
  std::printf("parse_s: %.2f\n", ds.parse_s);

  std::vector<std::string> encoded(chunks.size());
  auto t0 = Clock::now();
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto& c = chunks[i];
    const auto& v = ds.series[c.series].samples;
    encoded[i] = tsdb::EncodeChunk(std::span(v.data() + c.begin, c.end - c.begin));
  }
  auto t1 = Clock::now();
  std::vector<wire::Sample> out;
  uint64_t decoded = 0;
  double decode_s = 0;
  bool ok = true;
  for (size_t i = 0; i < chunks.size() && ok; ++i) {
    out.clear();
    auto d0 = Clock::now();
    Status st = tsdb::DecodeChunk(encoded[i], &out);
    decode_s += Seconds(d0, Clock::now());
    const auto& c = chunks[i];
    const auto& v = ds.series[c.series].samples;
    if (!st.ok() || out.size() != c.end - c.begin) {
      std::fprintf(stderr, "chunk %zu: %s\n", i, st.ToString().c_str());
      ok = false;
      break;
    }
    for (size_t k = 0; k < out.size(); ++k) {
      if (!SameSample(out[k], v[c.begin + k])) {
        std::fprintf(stderr, "chunk %zu sample %zu differs\n", i, k);
        ok = false;
        break;
      }
    }
    decoded += out.size();
  }
  double encode_s = Seconds(t0, t1);
  uint64_t bytes = 0;
  for (const auto& e : encoded) bytes += e.size();
  std::printf("encoded_bytes: %llu\n", static_cast<unsigned long long>(bytes));
  std::printf("bytes_per_sample: %.4f\n", static_cast<double>(bytes) / ds.samples);
  std::printf("encode_s: %.3f\nencode_samples_per_s: %.0f\n", encode_s, ds.samples / encode_s);
  std::printf("decode_s: %.3f\ndecode_samples_per_s: %.0f\n", decode_s, decoded / decode_s);
  std::printf("verify: %s\n", ok ? "ok" : "FAILED");

  if (by_family) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> fam;  // samples, bytes
    for (size_t i = 0; i < chunks.size(); ++i) {
      auto& f = fam[FamilyOf(ds.series[chunks[i].series].key)];
      f.first += chunks[i].end - chunks[i].begin;
      f.second += encoded[i].size();
    }
    std::printf("%-44s %12s %12s %8s %7s\n", "family", "samples", "bytes", "B/sample", "share");
    for (const auto& [name, sb] : fam) {
      std::printf("%-44s %12llu %12llu %8.3f %6.1f%%\n", name.c_str(),
                  static_cast<unsigned long long>(sb.first),
                  static_cast<unsigned long long>(sb.second),
                  static_cast<double>(sb.second) / sb.first, 100.0 * sb.second / bytes);
    }
  }
  return ok ? 0 : 2;
}

#ifdef VIGIL_BENCH_WITH_DB
// Turns `name{a="1",b="2"}` into labels; the dataset's values carry no
// escapes other than \" and \\, which are undone here.
wire::Labels KeyToLabels(const std::string& key) {
  wire::Labels labels;
  size_t brace = key.find('{');
  labels.push_back({std::string(wire::kMetricNameLabel), key.substr(0, brace)});
  if (brace == std::string::npos) return labels;
  size_t i = brace + 1;
  while (i < key.size() && key[i] != '}') {
    size_t eq = key.find('=', i);
    std::string name = key.substr(i, eq - i);
    std::string value;
    for (i = eq + 2; i < key.size() && key[i] != '"'; ++i) {
      if (key[i] == '\\' && i + 1 < key.size()) ++i;
      value.push_back(key[i]);
    }
    labels.push_back({name, value});
    i += 1;
    if (i < key.size() && key[i] == ',') ++i;
  }
  wire::NormalizeLabels(&labels);
  return labels;
}

// CPU time of the calling thread.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// User + system CPU time of this process (all threads).
double ProcessCpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

int RunDb(const char* path, const char* dir) {
  Dataset ds;
  if (!Load(path, &ds)) return 1;
  std::vector<wire::Labels> labels;
  for (const auto& s : ds.series) labels.push_back(KeyToLabels(s.key));
  // One batch per timestamp with every series that has a sample then, as a
  // collector pass would deliver it.
  std::map<int64_t, std::vector<std::pair<size_t, double>>> by_time;
  for (size_t s = 0; s < ds.series.size(); ++s) {
    for (const auto& x : ds.series[s].samples) by_time[x.t_ms].emplace_back(s, x.value);
  }
  tsdb::Options opt;
  opt.dir = dir;
  // The dataset may be older than the default raw retention: keep it all.
  opt.retention_ms = 100LL * 365 * 24 * 3600 * 1000;
  auto db = tsdb::Db::Open(opt);
  if (!db.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir, db.status().ToString().c_str());
    return 1;
  }
  // Samples take the server's real ingest path: each pass's batch is encoded
  // into a wire frame (the agent's work, left out of the figures) and handed
  // to Ingester::Receive, which decodes, validates and appends it. Batches are
  // reused per set of series, as a collector sends the same series each pass.
  ingest::Ingester ingester(db->get());
  std::map<std::vector<size_t>, wire::MetricBatch> shapes;
  std::vector<size_t> shape;
  uint64_t seq = 0;
  double agent_cpu = 0;  // encoding frames: excluded
  double cpu0 = ProcessCpuSeconds();
  auto t0 = Clock::now();
  Clock::duration agent_wall{};
  for (const auto& [t, vals] : by_time) {
    auto a0 = Clock::now();
    double ac0 = ThreadCpuSeconds();
    shape.clear();
    for (const auto& sv : vals) shape.push_back(sv.first);
    auto [it, fresh] = shapes.try_emplace(shape);
    wire::MetricBatch& b = it->second;
    if (fresh) {
      b.source = "bench";
      for (size_t s : shape) b.series.push_back({labels[s], {}});
    }
    b.sequence = ++seq;
    for (size_t i = 0; i < vals.size(); ++i) {
      b.series[i].samples.clear();
      b.series[i].samples.push_back({t, vals[i].second});
    }
    std::string frame =
        wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(b), false);
    agent_cpu += ThreadCpuSeconds() - ac0;
    agent_wall += Clock::now() - a0;
    Status st = ingester.Receive(frame);
    if (!st.ok()) {
      std::fprintf(stderr, "ingest: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  Status st = (*db)->Maintain();
  if (st.ok()) st = (*db)->Close();
  auto t1 = Clock::now();
  double cpu1 = ProcessCpuSeconds();
  if (!st.ok()) {
    std::fprintf(stderr, "maintain/close: %s\n", st.ToString().c_str());
    return 1;
  }
  // Everything the server did, chunk encoding and persistence included.
  double ingest_s = std::chrono::duration<double>(t1 - t0 - agent_wall).count();
  double ingest_cpu = cpu1 - cpu0 - agent_cpu;
  std::printf("db_samples: %llu\n", static_cast<unsigned long long>(ds.samples));
  std::printf("db_ingest_s: %.3f\ndb_ingest_samples_per_s: %.0f\n", ingest_s,
              ds.samples / ingest_s);
  // Per CPU-second, so engines that use several cores compare fairly.
  std::printf("db_ingest_cpu_s: %.3f\ndb_ingest_samples_per_cpu_s: %.0f\n", ingest_cpu,
              ds.samples / ingest_cpu);
  auto size = Env::Default()->DirSize(dir);
  if (size.ok()) {
    std::printf("db_disk_bytes: %llu\ndb_bytes_per_sample: %.4f\n",
                static_cast<unsigned long long>(*size), static_cast<double>(*size) / ds.samples);
  }
  return 0;
}
#endif

int Usage() {
  std::fprintf(stderr,
               "usage: tsdb_codec_bench codec FILE [--window-s N] [--by-family]\n"
#ifdef VIGIL_BENCH_WITH_DB
               "       tsdb_codec_bench db FILE DIR\n"
#endif
  );
  return 64;
}

}  // namespace
}  // namespace vigil::bench

int main(int argc, char** argv) {
  using namespace vigil::bench;
  if (argc < 3) return Usage();
  std::string mode = argv[1];
  if (mode == "codec") {
    int64_t window_s = 7200;
    bool by_family = false;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--window-s" && i + 1 < argc) {
        window_s = std::atoll(argv[++i]);
      } else if (a == "--by-family") {
        by_family = true;
      } else {
        return Usage();
      }
    }
    if (window_s <= 0) return Usage();
    return RunCodec(argv[2], window_s, by_family);
  }
#ifdef VIGIL_BENCH_WITH_DB
  if (mode == "db" && argc == 4) return RunDb(argv[2], argv[3]);
#endif
  return Usage();
}
