// Log store benchmark (bench/RESULTS.md "Logs"): ingest a genlog file into a
// LogStore through Append, then time keyword queries on it. A plain program
// printing `key: value` lines that bench/log_store_compare.sh reads.
//
//   logstore_bench ingest FILE DIR [MAX_LINES]   (BATCH_LINES=n, default 4000;
//                                                 SYNC_MAINTAIN=1: no background
//                                                 thread, Maintain() after each
//                                                 Append, so heads stay bounded)
//   logstore_bench query DIR QUERY [RUNS]        (RUNS default 5)
//   logstore_bench filter FILE TERM [MAX_LINES]  (BATCH_LINES as for ingest)
//   logstore_bench recompress DIR [RAW_BYTES]    (archive pass; knobs below)
//
// ingest: batches of BATCH_LINES lines of one source (labels job, source;
// byte offsets as the agent sends them; level from parse/logs DetectLevel;
// times 37 ms apart, ending now, as genlog's own timestamps are) go through
// LogStore::Append with the production Options (background maintenance on,
// WAL fsync per Append), then Close() cuts the remaining heads. Timed: the
// Append calls plus Close. Reading the file and building the batches is
// measured on the main thread's CPU clock and reported apart, so
// `store_cpu_s` is the store's CPU alone (all threads minus batch building).
//
// query: opens the store (its Open time is reported), then RUNS rounds of
// (a) Query with limit 100, newest first, and (b) a count of every matching
// line: Histogram with one bucket over all time (line filters make it read
// every candidate block). Round 1 is "cold" in the sense of a freshly opened
// store (the script drops the page cache before it for a disk-cold figure);
// `warm_*` are the medians of rounds 2..RUNS.
//
// filter: the token filter alone, without a store: cuts FILE into blocks of
// BATCH_LINES lines as ingest does, times building each block's filter
// (TrigramCollector Add + Build, this thread's CPU clock) and reports the
// filter bytes and how many blocks the filter lets through for `|= TERM`
// (candidates) next to how many really hold TERM.
//
// recompress: the archive pass (store/logs/recompress.h) over every day file
// of a closed store DIR, whatever its age (MIN_AGE_MS to change that), with
// ArchiveOptions' defaults unless ARCHIVE_LEVEL, ARCHIVE_WLOG, ARCHIVE_CLOG,
// ARCHIVE_HLOG, ARCHIVE_SLOG, ARCHIVE_MML, ARCHIVE_TLEN, ARCHIVE_STRATEGY
// say otherwise; MAX_BLOCKS=n stops after n blocks, DRY_RUN=1 writes nothing
// (ratio and speed only). Prints the dir's bytes before and after (and
// RAW_BYTES / size when given), wall and CPU seconds, MB/s of block payload,
// the zstd context's size and peak RSS.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "parse/logs/level.h"
#include "query/logql.h"
#include "store/logs/format.h"
#include "store/logs/log_store.h"
#include "store/logs/recompress.h"

namespace {

using namespace vigil;  // NOLINT: a benchmark program
using Clock = std::chrono::steady_clock;

double Secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double ProcessCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double ThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

long PeakRssKib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

logstore::Options StoreOptions(const char* dir) {
  logstore::Options o;
  o.dir = dir;
  o.retention_days = 0;  // genlog-like times span days; keep them all
  return o;
}

// Knobs from the environment (documented at the top of this file).
bool EnvFlag(const char* name) {
  const char* e = std::getenv(name);
  return e != nullptr && std::string(e) == "1";
}

// Lines per batch (ingest) or per block (filter): BATCH_LINES, else 4,000.
size_t BatchLines() {
  const char* b = std::getenv("BATCH_LINES");
  return b != nullptr ? static_cast<size_t>(std::max(1, std::atoi(b))) : 4000;
}

bool OpenInput(const char* file, std::ifstream* in) {
  in->open(file, std::ios::binary);
  if (!*in) std::fprintf(stderr, "cannot read %s\n", file);
  return static_cast<bool>(*in);
}

int Ingest(const char* file, const char* dir, uint64_t max_lines) {
  const size_t batch_lines = BatchLines();
  std::ifstream in;
  if (!OpenInput(file, &in)) return 1;
  const bool sync_maintain = EnvFlag("SYNC_MAINTAIN");
  logstore::Options opts = StoreOptions(dir);
  opts.background_maintenance = !sync_maintain;
  auto store = logstore::LogStore::Open(opts);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  // Count lines first so the times can end at "now" (recent data, as a live
  // agent would send), 37 ms apart like genlog's own timestamps.
  uint64_t total = 0;
  {
    std::string l;
    while (total < max_lines && std::getline(in, l)) ++total;
    in.clear();
    in.seekg(0);
  }
  const int64_t step_ns = 37'000'000;
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const int64_t t0 = now_ns - static_cast<int64_t>(total) * step_ns;

  double build_cpu = 0, append_s = 0;
  double cpu0 = ProcessCpu();
  uint64_t lines = 0, raw_bytes = 0, offset = 0, batches = 0;
  std::string line;
  bool eof = false;
  while (!eof && lines < total) {
    double b0 = ThreadCpu();
    wire::LogBatch batch;
    batch.source = "bench";
    batch.sequence = ++batches;
    wire::LogStream& s = batch.streams.emplace_back();
    s.source_id = "file:bench:1";
    s.labels = {{"job", "train"}, {"source", file}};
    s.start_offset = offset;
    s.records.reserve(batch_lines);
    while (s.records.size() < batch_lines && lines < total) {
      if (!std::getline(in, line)) {
        eof = true;
        break;
      }
      wire::LogRecord& r = s.records.emplace_back();
      r.time_ns = t0 + static_cast<int64_t>(lines) * step_ns;
      r.offset = offset;
      r.level = parse::logs::DetectLevel(line);
      offset += line.size() + 1;
      raw_bytes += line.size() + 1;
      r.line = std::move(line);
      ++lines;
    }
    s.end_offset = offset;
    build_cpu += ThreadCpu() - b0;
    if (s.records.empty()) break;
    auto a0 = Clock::now();
    Status st = (*store)->Append("bench", batch);
    if (st.ok() && sync_maintain) st = (*store)->Maintain();
    append_s += Secs(a0, Clock::now());
    if (!st.ok()) {
      std::fprintf(stderr, "append: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  auto c0 = Clock::now();
  Status st = (*store)->Close();
  double close_s = Secs(c0, Clock::now());
  if (!st.ok()) {
    std::fprintf(stderr, "close: %s\n", st.ToString().c_str());
    return 1;
  }
  double cpu = ProcessCpu() - cpu0;
  double store_cpu = cpu - build_cpu;
  logstore::LogStoreStats stats = (*store)->Stats();
  std::printf("lines: %llu\n", static_cast<unsigned long long>(lines));
  std::printf("raw_bytes: %llu\n", static_cast<unsigned long long>(raw_bytes));
  std::printf("batches: %llu\n", static_cast<unsigned long long>(batches));
  std::printf("append_s: %.3f\n", append_s);
  std::printf("close_s: %.3f\n", close_s);
  std::printf("ingest_lines_per_s: %.0f\n", static_cast<double>(lines) / (append_s + close_s));
  std::printf("build_cpu_s: %.3f\n", build_cpu);
  std::printf("store_cpu_s: %.3f\n", store_cpu);
  std::printf("ingest_lines_per_cpu_s: %.0f\n", static_cast<double>(lines) / store_cpu);
  std::printf("blocks: %llu\n", static_cast<unsigned long long>(stats.blocks));
  std::printf("store_disk_bytes: %llu\n", static_cast<unsigned long long>(stats.disk_bytes));
  std::printf("peak_rss_kib: %ld\n", PeakRssKib());
  return 0;
}

int Query(const char* dir, const char* text, int runs) {
  auto parsed = query::ParseLogQuery(text);
  if (!parsed.ok()) {
    std::fprintf(stderr, "query: %s\n", parsed.status().ToString().c_str());
    return 1;
  }
  auto o0 = Clock::now();
  logstore::Options opts = StoreOptions(dir);
  opts.background_maintenance = false;  // read-only use: nothing to cut
  auto store = logstore::LogStore::Open(opts);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  double open_s = Secs(o0, Clock::now());
  std::vector<double> top, count;
  uint64_t hits = 0, matches = 0, scanned = 0, skipped = 0;
  for (int i = 0; i < runs; ++i) {
    logstore::LogQuery q = *parsed;
    q.limit = 100;
    auto t0 = Clock::now();
    auto r = (*store)->Query(q);
    top.push_back(Secs(t0, Clock::now()));
    if (!r.ok()) {
      std::fprintf(stderr, "query: %s\n", r.status().ToString().c_str());
      return 1;
    }
    hits = r->entries.size();
    scanned = r->blocks_scanned;
    skipped = r->blocks_skipped;

    logstore::LogQuery all = *parsed;
    auto h0 = Clock::now();
    // One bucket over all time: start/end open are the data's own range.
    auto h = (*store)->Histogram(all, int64_t{1000} * 86400 * 1'000'000'000);
    count.push_back(Secs(h0, Clock::now()));
    if (!h.ok()) {
      std::fprintf(stderr, "histogram: %s\n", h.status().ToString().c_str());
      return 1;
    }
    matches = 0;
    for (const auto& b : h->buckets) {
      for (uint64_t c : b) matches += c;
    }
  }
  std::vector<double> warm_top(top.begin() + 1, top.end());
  std::vector<double> warm_count(count.begin() + 1, count.end());
  std::printf("query: %s\n", text);
  std::printf("open_s: %.4f\n", open_s);
  std::printf("top100_hits: %llu\n", static_cast<unsigned long long>(hits));
  std::printf("top100_blocks_scanned: %llu\n", static_cast<unsigned long long>(scanned));
  std::printf("top100_blocks_skipped: %llu\n", static_cast<unsigned long long>(skipped));
  std::printf("count: %llu\n", static_cast<unsigned long long>(matches));
  std::printf("cold_top100_s: %.4f\n", top[0]);
  std::printf("cold_count_s: %.4f\n", count[0]);
  std::printf("warm_top100_s: %.4f\n", Median(warm_top));
  std::printf("warm_count_s: %.4f\n", Median(warm_count));
  std::printf("peak_rss_kib: %ld\n", PeakRssKib());
  return 0;
}

int Filter(const char* file, const char* term, uint64_t max_lines) {
  const size_t batch_lines = BatchLines();
  std::ifstream in;
  if (!OpenInput(file, &in)) return 1;
  logstore::TrigramCollector collector;
  const auto keys = logstore::PatternFilterKeys(term);
  uint64_t lines = 0, bytes = 0, blocks = 0, filter_bytes = 0, candidates = 0, holding = 0;
  double cpu = 0;
  std::vector<std::string> block;
  std::string line;
  bool eof = false;
  while (!eof && lines < max_lines) {
    block.clear();
    while (block.size() < batch_lines && lines < max_lines) {
      if (!std::getline(in, line)) {
        eof = true;
        break;
      }
      bytes += line.size();
      ++lines;
      block.push_back(std::move(line));
    }
    if (block.empty()) break;
    double c0 = ThreadCpu();
    for (const auto& l : block) collector.Add(l);
    std::string f = collector.Build();
    cpu += ThreadCpu() - c0;
    ++blocks;
    filter_bytes += f.size();
    bool may = logstore::FilterMayContain(f, keys);
    candidates += may;
    bool has = false;
    for (const auto& l : block) has = has || l.find(term) != std::string::npos;
    holding += has;
    if (has && !may) {
      std::fprintf(stderr, "BUG: block %llu holds the term but its filter rules it out\n",
                   static_cast<unsigned long long>(blocks - 1));
      return 1;
    }
  }
  std::printf("lines: %llu\n", static_cast<unsigned long long>(lines));
  std::printf("blocks: %llu\n", static_cast<unsigned long long>(blocks));
  std::printf("filter_bytes: %llu\n", static_cast<unsigned long long>(filter_bytes));
  std::printf("filter_bytes_per_block: %.0f\n", static_cast<double>(filter_bytes) / blocks);
  std::printf("filter_cpu_s: %.3f\n", cpu);
  std::printf("filter_ns_per_line: %.1f\n", cpu * 1e9 / static_cast<double>(lines));
  std::printf("filter_ns_per_byte: %.3f\n", cpu * 1e9 / static_cast<double>(bytes));
  std::printf("candidate_blocks: %llu\n", static_cast<unsigned long long>(candidates));
  std::printf("blocks_holding_term: %llu\n", static_cast<unsigned long long>(holding));
  return 0;
}

void EnvInt(const char* name, int* v) {
  if (const char* e = std::getenv(name)) *v = std::atoi(e);
}

int Recompress(const char* dir, double raw) {
  logstore::ArchiveOptions o;
  o.min_age_ms = INT64_MIN / 2;  // every day file: ingest's times end now
  if (const char* e = std::getenv("MIN_AGE_MS")) o.min_age_ms = std::atoll(e);
  if (const char* e = std::getenv("MAX_BLOCKS")) o.max_blocks = std::strtoull(e, nullptr, 10);
  o.dry_run = EnvFlag("DRY_RUN");
  EnvInt("ARCHIVE_LEVEL", &o.level);
  EnvInt("ARCHIVE_WLOG", &o.window_log);
  EnvInt("ARCHIVE_CLOG", &o.chain_log);
  EnvInt("ARCHIVE_HLOG", &o.hash_log);
  EnvInt("ARCHIVE_SLOG", &o.search_log);
  EnvInt("ARCHIVE_MML", &o.min_match);
  EnvInt("ARCHIVE_TLEN", &o.target_length);
  EnvInt("ARCHIVE_STRATEGY", &o.strategy);
  Env* env = Env::Default();
  auto before = env->DirSize(dir);
  if (!before.ok()) {
    std::fprintf(stderr, "recompress: %s\n", before.status().ToString().c_str());
    return 1;
  }
  logstore::Archiver archiver(o);
  logstore::ArchiveStats stats;
  double cpu0 = ProcessCpu();
  auto t0 = Clock::now();
  Status st = archiver.ArchiveDir(dir, &stats);
  double secs = Secs(t0, Clock::now());
  double cpu = ProcessCpu() - cpu0;
  for (const auto& e : stats.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
  if (!st.ok()) {
    std::fprintf(stderr, "recompress: %s\n", st.ToString().c_str());
    return 1;
  }
  uint64_t after = env->DirSize(dir).value_or(0);
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("params: level %d wlog %d clog %d hlog %d slog %d mml %d tlen %d strategy %d%s\n",
              o.level, o.window_log, o.chain_log, o.hash_log, o.search_log, o.min_match,
              o.target_length, o.strategy, o.dry_run ? " (dry run)" : "");
  std::printf("files: %llu\n", u(stats.files));
  std::printf("blocks: %llu\n", u(stats.blocks));
  std::printf("recompressed: %llu\n", u(stats.recompressed));
  std::printf("kept: %llu\n", u(stats.kept));
  std::printf("skipped: %llu\n", u(stats.skipped));
  std::printf("vacuumed: %d\n", stats.vacuumed ? 1 : 0);
  std::printf("payload_bytes: %llu\n", u(stats.raw_bytes));
  std::printf("data_bytes_before: %llu\n", u(stats.data_before));
  std::printf("data_bytes_after: %llu\n", u(stats.data_after));
  std::printf("data_ratio_before: %.3f\n",
              static_cast<double>(stats.raw_bytes) / static_cast<double>(stats.data_before));
  std::printf("data_ratio_after: %.3f\n",
              static_cast<double>(stats.raw_bytes) / static_cast<double>(stats.data_after));
  std::printf("dir_bytes_before: %llu\n", u(*before));
  std::printf("dir_bytes_after: %llu\n", u(after));
  if (raw > 0) {
    std::printf("raw_over_dir_before: %.3f\n", raw / static_cast<double>(*before));
    std::printf("raw_over_dir_after: %.3f\n", raw / static_cast<double>(after));
  }
  std::printf("seconds: %.3f\n", secs);
  std::printf("cpu_s: %.3f\n", cpu);
  std::printf("compress_s: %.3f\n", stats.compress_seconds);
  std::printf("payload_mb_per_s: %.2f\n", static_cast<double>(stats.raw_bytes) / 1e6 / secs);
  std::printf("payload_mb_per_compress_s: %.2f\n",
              static_cast<double>(stats.raw_bytes) / 1e6 / stats.compress_seconds);
  std::printf("context_bytes: %llu\n", u(stats.context_bytes));
  std::printf("peak_rss_kib: %ld\n", PeakRssKib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "ingest" && argc >= 4) {
    uint64_t max_lines = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : UINT64_MAX;
    return Ingest(argv[2], argv[3], max_lines);
  }
  if (mode == "query" && argc >= 4) {
    int runs = argc > 4 ? std::max(2, std::atoi(argv[4])) : 5;
    return Query(argv[2], argv[3], runs);
  }
  if (mode == "filter" && argc >= 4) {
    uint64_t max_lines = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : UINT64_MAX;
    return Filter(argv[2], argv[3], max_lines);
  }
  if (mode == "recompress" && argc >= 3) {
    return Recompress(argv[2], argc > 3 ? std::strtod(argv[3], nullptr) : 0);
  }
  std::fprintf(stderr,
               "usage: logstore_bench ingest FILE DIR [MAX_LINES]\n"
               "       logstore_bench query DIR QUERY [RUNS]\n"
               "       logstore_bench filter FILE TERM [MAX_LINES]\n"
               "       logstore_bench recompress DIR [RAW_BYTES]\n");
  return 2;
}
