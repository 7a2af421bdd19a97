// LogStore reads: Query, Since, Context, Histogram, label names and values.
//
// Every read copies what it needs out of the in-memory state under mu_ (head
// lines that match, index entries of candidate blocks) and then reads,
// decompresses and scans blocks without holding it, so appends and
// maintenance are never blocked behind disk reads.
#include <re2/re2.h>
#include <string.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "store/logs/log_store_impl.h"

namespace vigil::logstore {
namespace {

constexpr size_t kMaxPatternBytes = 64 * 1024;
constexpr uint8_t kAllLevels = (1u << wire::kLogLevelCount) - 1;

struct CompiledFilter {
  FilterType type = FilterType::kContains;
  std::string pattern;
  std::unique_ptr<RE2> re;
  FilterKeys keys;  // kContains, and kRegex that is a plain literal
};

struct Compiled {
  struct Matcher {
    const LabelMatcher* m = nullptr;
    std::unique_ptr<RE2> re;
  };
  std::vector<Matcher> stream;
  uint8_t level_mask = kAllLevels;
  std::vector<CompiledFilter> filters;
  bool uses_token_filter = false;

  bool StreamMatches(const wire::Labels& labels) const {
    for (const auto& mm : stream) {
      std::string_view v;
      for (const auto& l : labels) {
        if (l.name == mm.m->name) v = l.value;
      }
      if (!ValueMatches(mm, v)) return false;
    }
    return true;
  }
  static bool ValueMatches(const Matcher& mm, std::string_view v) {
    switch (mm.m->type) {
      case MatchType::kEqual:
        return v == mm.m->value;
      case MatchType::kNotEqual:
        return v != mm.m->value;
      case MatchType::kRegex:
        return RE2::FullMatch(v, *mm.re);
      case MatchType::kNotRegex:
        return !RE2::FullMatch(v, *mm.re);
    }
    return false;
  }
  bool LevelOk(uint8_t level) const { return (level_mask >> level) & 1; }
  bool LineMatches(std::string_view line) const {
    for (const auto& f : filters) {
      bool hit;
      switch (f.type) {
        case FilterType::kContains:
        case FilterType::kNotContains:
          hit = line.find(f.pattern) != std::string_view::npos;
          if (hit != (f.type == FilterType::kContains)) return false;
          break;
        case FilterType::kRegex:
        case FilterType::kNotRegex:
          hit = RE2::PartialMatch(line, *f.re);
          if (hit != (f.type == FilterType::kRegex)) return false;
          break;
      }
    }
    return true;
  }
  // Levels some block with these counts could contribute.
  bool LevelsPresent(const BlockHeader& h) const {
    for (int i = 0; i < wire::kLogLevelCount; ++i) {
      if (LevelOk(static_cast<uint8_t>(i)) && h.level_counts[i] > 0) return true;
    }
    return false;
  }
};

Result<std::unique_ptr<RE2>> CompileRegex(const std::string& pattern, std::string_view what) {
  if (pattern.size() > kMaxPatternBytes) {
    return InvalidArgument(std::string(what) + " is longer than 64 KiB");
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, opts);
  if (!re->ok()) {
    return InvalidArgument("invalid regular expression in " + std::string(what) + " \"" + pattern +
                           "\": " + re->error());
  }
  return re;
}

Result<std::unique_ptr<Compiled>> Compile(const LogQuery& q) {
  auto c = std::make_unique<Compiled>();
  for (const auto& m : q.matchers) {
    Compiled::Matcher mm{&m, nullptr};
    if (m.type == MatchType::kRegex || m.type == MatchType::kNotRegex) {
      VIGIL_ASSIGN_OR_RETURN(mm.re, CompileRegex(m.value, "matcher " + m.name));
    }
    if (m.name == "level") {
      uint8_t mask = 0;
      for (int i = 0; i < wire::kLogLevelCount; ++i) {
        if (Compiled::ValueMatches(mm, LevelName(i))) mask |= static_cast<uint8_t>(1u << i);
      }
      c->level_mask &= mask;
      continue;
    }
    c->stream.push_back(std::move(mm));
  }
  for (const auto& f : q.filters) {
    CompiledFilter cf;
    cf.type = f.type;
    cf.pattern = f.pattern;
    if (f.pattern.size() > kMaxPatternBytes) {
      return InvalidArgument("line filter pattern is longer than 64 KiB");
    }
    if (f.type == FilterType::kRegex || f.type == FilterType::kNotRegex) {
      VIGIL_ASSIGN_OR_RETURN(cf.re, CompileRegex(f.pattern, "line filter"));
    }
    // A regex without metacharacters is a substring search: it can skip too.
    bool literal_regex = f.type == FilterType::kRegex &&
                         f.pattern.find_first_of("\\.^$|?*+()[]{}") == std::string::npos;
    if (f.type == FilterType::kContains || literal_regex) {
      cf.keys = PatternFilterKeys(f.pattern);
      c->uses_token_filter = c->uses_token_filter || !cf.keys.empty();
    }
    c->filters.push_back(std::move(cf));
  }
  return c;
}

size_t ClampLimit(size_t limit) {
  return limit == 0 || limit > kMaxQueryLimit ? kMaxQueryLimit : limit;
}

// Ordering key of an entry: (time, seq) for queries, (0, seq) for tails.
struct Key {
  int64_t a = 0;
  uint64_t b = 0;
  auto operator<=>(const Key&) const = default;
};

// Keeps the best `k` entries seen; "best" is largest or smallest key.
class TopK {
 public:
  TopK(size_t k, bool largest) : k_(k), largest_(largest) {}
  bool full() const { return heap_.size() >= k_; }
  Key worst() const { return heap_.front().first; }
  bool dropped() const { return dropped_; }
  void MarkDropped() { dropped_ = true; }
  bool Accepts(Key key) {
    if (!full()) return true;
    bool better = largest_ ? key > worst() : key < worst();
    if (!better) dropped_ = true;
    return better;
  }
  void Add(Key key, LogEntry e) {
    heap_.emplace_back(key, std::move(e));
    std::push_heap(heap_.begin(), heap_.end(), Cmp());
    if (heap_.size() > k_) {
      std::pop_heap(heap_.begin(), heap_.end(), Cmp());
      heap_.pop_back();
      dropped_ = true;
    }
  }
  // Best first, with their keys.
  std::vector<std::pair<Key, LogEntry>> TakeWithKeys() {
    std::sort_heap(heap_.begin(), heap_.end(), Cmp());
    return std::move(heap_);
  }
  // Best first.
  std::vector<LogEntry> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), Cmp());  // ascending by Cmp: best first
    std::vector<LogEntry> out;
    out.reserve(heap_.size());
    for (auto& [k, e] : heap_) out.push_back(std::move(e));
    heap_.clear();
    return out;
  }

 private:
  // Heap order puts the worst kept entry at the front.
  struct CmpT {
    bool largest;
    bool operator()(const std::pair<Key, LogEntry>& x, const std::pair<Key, LogEntry>& y) const {
      return largest ? x.first > y.first : x.first < y.first;
    }
  };
  CmpT Cmp() const { return CmpT{largest_}; }

  size_t k_;
  bool largest_;
  bool dropped_ = false;
  std::vector<std::pair<Key, LogEntry>> heap_;
};

struct Candidate {
  BlockRef ref;
  std::shared_ptr<const wire::Labels> labels;
};

LogEntry EntryFromHead(const Stream& s, const HeadLine& l) {
  LogEntry e;
  e.ref = {s.id, l.line_no};
  e.seq = l.seq;
  e.labels = s.labels;
  e.time_ns = l.time_ns;
  e.level = static_cast<wire::LogLevel>(l.level);
  e.flags = l.flags;
  e.line = std::string(s.head.Text(l));
  return e;
}

LogEntry EntryFromBlock(const Candidate& c, const DecodedBlock& b, size_t i) {
  LogEntry e;
  e.ref = {c.ref.header.stream_id, c.ref.header.first_line_no + i};
  e.seq = b.seqs[i];
  e.labels = c.labels;
  e.time_ns = b.times[i];
  e.level = static_cast<wire::LogLevel>(b.meta[i] & 0x0f);
  e.flags = b.meta[i] >> 4;
  e.line = std::string(b.line(i));
  return e;
}

// Reads and scans one block: calls fn(block, i) for each line in [start, end)
// whose level and text match. Counts the block as skipped when its token
// filter rules out a `|=` pattern, else as scanned.
template <typename Fn>
Status ScanBlock(const Candidate& c, const Compiled& q, int64_t start, int64_t end,
                 QueryResult* counters, Fn fn) {
  if (q.uses_token_filter) {
    std::string from_disk;
    if (!c.ref.filter) {
      VIGIL_ASSIGN_OR_RETURN(from_disk, c.ref.part->ReadFilter(c.ref.rowid));
    }
    std::string_view filter = c.ref.filter ? std::string_view(*c.ref.filter) : from_disk;
    for (const auto& f : q.filters) {
      if (f.keys.empty()) continue;  // only positive substring filters have them
      if (!FilterMayContain(filter, f.keys)) {
        ++counters->blocks_skipped;
        return Status::Ok();
      }
    }
  }
  VIGIL_ASSIGN_OR_RETURN(std::string data, c.ref.part->ReadData(c.ref.rowid));
  thread_local DecodedBlock block;
  VIGIL_RETURN_IF_ERROR(DecodeBlock(data, &block).WithContext(c.ref.part->path()));
  if (block.size() != c.ref.header.lines()) {
    return Corruption("log block line count differs from its index in " + c.ref.part->path());
  }
  ++counters->blocks_scanned;
  auto check = [&](size_t i) {
    if (block.times[i] < start || block.times[i] >= end) return;
    if (!q.LevelOk(block.meta[i] & 0x0f)) return;
    if (!q.LineMatches(block.line(i))) return;
    fn(block, i);
  };
  // A leading `|=` is searched over the whole text at once (memmem), which
  // is much faster than line by line when matches are rare.
  if (!q.filters.empty() && q.filters[0].type == FilterType::kContains &&
      !q.filters[0].pattern.empty()) {
    const std::string& pat = q.filters[0].pattern;
    const char* text = block.text.data();
    size_t pos = 0;
    while (pos < block.text.size()) {
      const void* hit = memmem(text + pos, block.text.size() - pos, pat.data(), pat.size());
      if (hit == nullptr) break;
      auto at = static_cast<uint32_t>(static_cast<const char*>(hit) - text);
      size_t i = std::upper_bound(block.offsets.begin(), block.offsets.end(), at) -
                 block.offsets.begin() - 1;
      if (at + pat.size() <= block.offsets[i + 1]) {
        check(i);
        pos = block.offsets[i + 1];
      } else {
        pos = at + 1;  // the hit spans two lines
      }
    }
    return Status::Ok();
  }
  for (size_t i = 0; i < block.size(); ++i) check(i);
  return Status::Ok();
}

bool Overlaps(int64_t min_t, int64_t max_t, int64_t start, int64_t end) {
  return max_t >= start && min_t < end;
}

// Reading candidate blocks is mostly zstd decompression: a keyword query over
// days of logs decompresses hundreds of megabytes. Blocks are scanned on up
// to this many threads (never more than the CPUs), and only when there are
// enough of them to pay for starting threads.
size_t ScanThreads(size_t blocks) {
  constexpr size_t kMinBlocksPerThread = 4;
  size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min({cpus, size_t{4}, blocks / kMinBlocksPerThread}));
}

// What one block contributed to a Query, produced on a worker thread.
struct QuerySlot {
  std::vector<std::pair<Key, LogEntry>> entries;
  bool dropped = false;  // the block had more matches than the limit
  QueryResult counters;
};

// Runs scan(i, &slot) for i in [0, n) on `threads` threads and merge(i, &slot)
// on the caller's thread strictly in order of i, so the outcome is that of a
// serial loop. merge returns false to stop: blocks not yet merged are
// dropped. Workers run at most 2 * threads blocks ahead of the merge, which
// bounds both memory and the work wasted when a query stops early.
template <typename Slot, typename Scan, typename Merge>
Status OrderedParallelScan(size_t n, size_t threads, Scan scan, Merge merge) {
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) {
      Slot slot;
      VIGIL_RETURN_IF_ERROR(scan(i, &slot));
      if (!merge(i, &slot)) break;
    }
    return Status::Ok();
  }
  const size_t ahead = 2 * threads;
  std::vector<Slot> slots(n);
  std::vector<Status> statuses(n);
  std::vector<char> done(n, 0);
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0, merged = 0;
  bool stop = false;
  auto worker = [&] {
    while (true) {
      size_t i;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < merged + ahead; });
        if (stop || next >= n) return;
        i = next++;
      }
      Status st = scan(i, &slots[i]);  // slot i is this worker's alone until done[i]
      {
        std::lock_guard lock(mu);
        statuses[i] = std::move(st);
        done[i] = 1;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  Status result;
  for (size_t i = 0; i < n; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return done[i] != 0; });
      merged = i + 1;
    }
    cv.notify_all();
    if (!statuses[i].ok()) {
      result = statuses[i];
      break;
    }
    bool go_on = merge(i, &slots[i]);
    slots[i] = Slot();  // free what was merged
    if (!go_on) break;
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : pool) t.join();
  return result;
}

}  // namespace

Result<QueryResult> LogStoreImpl::Query(const LogQuery& query) const {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Compiled> q, Compile(query));
  QueryResult result;
  const bool backward = !query.forward;
  // Entries at or before the cursor (in the query's direction) are not asked for.
  auto past_cursor = [&](const Key& key) {
    if (!query.after) return true;
    const Key cursor{query.after->first, query.after->second};
    return backward ? key < cursor : key > cursor;
  };
  TopK top(ClampLimit(query.limit), backward);
  std::vector<Candidate> cands;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, s] : streams_) {
      if (!Overlaps(s->min_time, s->max_time, query.start_ns, query.end_ns)) continue;
      if (!q->StreamMatches(*s->labels)) continue;
      for (const HeadLine& l : s->head.lines) {
        if (l.time_ns < query.start_ns || l.time_ns >= query.end_ns || !q->LevelOk(l.level)) {
          continue;
        }
        if (!q->LineMatches(s->head.Text(l))) continue;
        Key key{l.time_ns, l.seq};
        if (past_cursor(key) && top.Accepts(key)) top.Add(key, EntryFromHead(*s, l));
      }
      for (const BlockRef& b : s->blocks) {
        if (!Overlaps(b.header.min_time, b.header.max_time, query.start_ns, query.end_ns)) continue;
        if (!q->LevelsPresent(b.header)) {
          ++result.blocks_skipped;
          continue;
        }
        cands.push_back({b, s->labels});
      }
    }
  }
  // Blocks in the order they can contribute, so a full result stops the scan.
  std::sort(cands.begin(), cands.end(), [&](const Candidate& x, const Candidate& y) {
    return backward ? x.ref.header.max_time > y.ref.header.max_time
                    : x.ref.header.min_time < y.ref.header.min_time;
  });
  // Each block keeps its own best `limit` matches (a block cannot place more
  // in the result), merged in the candidates' order.
  const size_t limit = ClampLimit(query.limit);
  auto scan = [&](size_t idx, QuerySlot* slot) {
    const Candidate& c = cands[idx];
    TopK local(limit, backward);
    VIGIL_RETURN_IF_ERROR(ScanBlock(c, *q, query.start_ns, query.end_ns, &slot->counters,
                                    [&](const DecodedBlock& b, size_t i) {
                                      Key key{b.times[i], b.seqs[i]};
                                      if (past_cursor(key) && local.Accepts(key)) {
                                        local.Add(key, EntryFromBlock(c, b, i));
                                      }
                                    }));
    slot->dropped = local.dropped();
    slot->entries = local.TakeWithKeys();
    return Status::Ok();
  };
  auto merge = [&](size_t idx, QuerySlot* slot) {
    const Candidate& c = cands[idx];
    if (top.full() && (backward ? c.ref.header.max_time < top.worst().a
                                : c.ref.header.min_time > top.worst().a)) {
      result.truncated = true;
      return false;
    }
    result.blocks_scanned += slot->counters.blocks_scanned;
    result.blocks_skipped += slot->counters.blocks_skipped;
    if (slot->dropped) top.MarkDropped();
    for (auto& [key, entry] : slot->entries) {
      if (top.Accepts(key)) top.Add(key, std::move(entry));
    }
    return true;
  };
  VIGIL_RETURN_IF_ERROR(
      OrderedParallelScan<QuerySlot>(cands.size(), ScanThreads(cands.size()), scan, merge));
  result.truncated = result.truncated || top.dropped();
  result.entries = top.Take();
  return result;
}

Result<std::vector<LogEntry>> LogStoreImpl::Since(const LogQuery& query, uint64_t after_seq) const {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Compiled> q, Compile(query));
  TopK top(ClampLimit(query.limit), /*largest=*/false);
  std::vector<Candidate> cands;
  {
    std::lock_guard lock(mu_);
    if (after_seq >= durable_seq_) return std::vector<LogEntry>{};
    const uint64_t newest = durable_seq_;
    for (const auto& [id, s] : streams_) {
      if (!q->StreamMatches(*s->labels)) continue;
      for (const HeadLine& l : s->head.lines) {
        if (l.seq <= after_seq || l.seq > newest || !q->LevelOk(l.level) ||
            !q->LineMatches(s->head.Text(l))) {
          continue;
        }
        Key key{0, l.seq};
        if (top.Accepts(key)) top.Add(key, EntryFromHead(*s, l));
      }
      // Newest blocks last in line order: walk back while they can hold newer lines.
      for (auto it = s->blocks.rbegin(); it != s->blocks.rend(); ++it) {
        if (it->header.max_seq <= after_seq) break;
        if (q->LevelsPresent(it->header)) cands.push_back({*it, s->labels});
      }
    }
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) {
    return x.ref.header.min_seq < y.ref.header.min_seq;
  });
  QueryResult counters;
  for (const Candidate& c : cands) {
    if (top.full() && c.ref.header.min_seq > top.worst().b) break;
    VIGIL_RETURN_IF_ERROR(
        ScanBlock(c, *q, INT64_MIN, INT64_MAX, &counters, [&](const DecodedBlock& b, size_t i) {
          if (b.seqs[i] <= after_seq) return;
          Key key{0, b.seqs[i]};
          if (top.Accepts(key)) top.Add(key, EntryFromBlock(c, b, i));
        }));
  }
  return top.Take();
}

Result<std::vector<LogEntry>> LogStoreImpl::Context(LineRef ref, size_t before,
                                                    size_t after) const {
  before = std::min(before, kMaxQueryLimit);
  after = std::min(after, kMaxQueryLimit);
  std::vector<LogEntry> out;
  std::vector<Candidate> cands;
  uint64_t lo = ref.line_no >= before ? ref.line_no - before : 0;
  uint64_t hi = ref.line_no + after;
  {
    std::lock_guard lock(mu_);
    auto it = streams_.find(ref.stream_id);
    if (it == streams_.end() || ref.line_no >= it->second->next_line) {
      return NotFound("no log line " + std::to_string(ref.line_no) + " in stream " +
                      std::to_string(ref.stream_id));
    }
    const Stream& s = *it->second;
    for (const HeadLine& l : s.head.lines) {
      if (l.line_no >= lo && l.line_no <= hi) out.push_back(EntryFromHead(s, l));
    }
    for (const BlockRef& b : s.blocks) {
      if (b.header.last_line_no >= lo && b.header.first_line_no <= hi) {
        cands.push_back({b, s.labels});
      }
    }
  }
  for (const Candidate& c : cands) {
    VIGIL_ASSIGN_OR_RETURN(std::string data, c.ref.part->ReadData(c.ref.rowid));
    DecodedBlock block;
    VIGIL_RETURN_IF_ERROR(DecodeBlock(data, &block).WithContext(c.ref.part->path()));
    for (size_t i = 0; i < block.size(); ++i) {
      uint64_t n = c.ref.header.first_line_no + i;
      if (n >= lo && n <= hi) out.push_back(EntryFromBlock(c, block, i));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const LogEntry& a, const LogEntry& b) { return a.ref.line_no < b.ref.line_no; });
  bool found = std::any_of(out.begin(), out.end(), [&](const LogEntry& e) { return e.ref == ref; });
  if (!found) {
    return NotFound("log line " + std::to_string(ref.line_no) + " of stream " +
                    std::to_string(ref.stream_id) + " is no longer stored (retention)");
  }
  return out;
}

Result<LevelHistogram> LogStoreImpl::Histogram(const LogQuery& query, int64_t step_ns) const {
  if (step_ns <= 0) return InvalidArgument("histogram step must be positive");
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Compiled> q, Compile(query));
  LevelHistogram h;
  h.step_ns = step_ns;
  std::vector<Candidate> cands;
  std::vector<std::pair<int64_t, uint8_t>> head_points;
  int64_t data_min = INT64_MAX, data_max = INT64_MIN;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, s] : streams_) {
      if (!Overlaps(s->min_time, s->max_time, query.start_ns, query.end_ns)) continue;
      if (!q->StreamMatches(*s->labels)) continue;
      for (const HeadLine& l : s->head.lines) {
        if (l.time_ns < query.start_ns || l.time_ns >= query.end_ns || !q->LevelOk(l.level)) {
          continue;
        }
        if (!q->LineMatches(s->head.Text(l))) continue;
        head_points.emplace_back(l.time_ns, l.level);
        data_min = std::min(data_min, l.time_ns);
        data_max = std::max(data_max, l.time_ns);
      }
      for (const BlockRef& b : s->blocks) {
        if (!Overlaps(b.header.min_time, b.header.max_time, query.start_ns, query.end_ns)) continue;
        if (!q->LevelsPresent(b.header)) continue;
        cands.push_back({b, s->labels});
        data_min = std::min(data_min, std::max(b.header.min_time, query.start_ns));
        data_max = std::max(data_max, std::min(b.header.max_time, query.end_ns - 1));
      }
    }
  }
  // An open range ends at the data, so "everything" stays a sane bucket count.
  int64_t start = query.start_ns > 0 ? query.start_ns : data_min;
  int64_t end = query.end_ns != INT64_MAX ? query.end_ns : data_max + 1;
  h.start_ns = start == INT64_MAX ? query.start_ns : start;
  if (start == INT64_MAX || end == INT64_MIN + 1 || end <= start) return h;
  __int128 n = (static_cast<__int128>(end) - start + step_ns - 1) / step_ns;
  if (n > static_cast<__int128>(kMaxHistogramBuckets)) {
    return InvalidArgument("histogram would have " + std::to_string(static_cast<int64_t>(n)) +
                           " buckets (at most " + std::to_string(kMaxHistogramBuckets) +
                           "); use a larger step");
  }
  if (data_min == INT64_MAX) return h;
  h.buckets.assign(static_cast<size_t>(n), {});
  auto bucket = [&](int64_t t) {
    return static_cast<size_t>((static_cast<__int128>(t) - start) / step_ns);
  };
  auto add = [&](int64_t t, uint8_t level) {
    if (t >= start && t < end) ++h.buckets[bucket(t)][level];
  };
  for (const auto& [t, level] : head_points) add(t, level);
  // The block's level counts answer for it when the whole block falls into
  // one bucket and no line filter has to look at the text; the others are
  // read (on several threads) into (time, level) points.
  std::vector<const Candidate*> to_read;
  for (const Candidate& c : cands) {
    const BlockHeader& bh = c.ref.header;
    if (q->filters.empty() && bh.min_time >= start && bh.max_time < end &&
        bucket(bh.min_time) == bucket(bh.max_time)) {
      auto& b = h.buckets[bucket(bh.min_time)];
      for (int i = 0; i < wire::kLogLevelCount; ++i) {
        if (q->LevelOk(static_cast<uint8_t>(i))) b[i] += bh.level_counts[i];
      }
      continue;
    }
    to_read.push_back(&c);
  }
  using Points = std::vector<std::pair<int64_t, uint8_t>>;
  auto scan = [&](size_t idx, Points* points) {
    QueryResult counters;
    return ScanBlock(*to_read[idx], *q, start, end, &counters,
                     [&](const DecodedBlock& b, size_t i) {
                       points->emplace_back(b.times[i], b.meta[i] & 0x0f);
                     });
  };
  auto merge = [&](size_t, Points* points) {
    for (const auto& [t, level] : *points) add(t, level);
    return true;
  };
  VIGIL_RETURN_IF_ERROR(
      OrderedParallelScan<Points>(to_read.size(), ScanThreads(to_read.size()), scan, merge));
  return h;
}

std::vector<std::string> LogStoreImpl::LabelNames(int64_t start_ns, int64_t end_ns) const {
  std::set<std::string> names{"level"};
  std::lock_guard lock(mu_);
  for (const auto& [id, s] : streams_) {
    if (!Overlaps(s->min_time, s->max_time, start_ns, end_ns)) continue;
    for (const auto& l : *s->labels) names.insert(l.name);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> LogStoreImpl::LabelValues(std::string_view name, int64_t start_ns,
                                                   int64_t end_ns) const {
  std::vector<std::string> out;
  if (name == "level") {
    for (int i = 0; i < wire::kLogLevelCount; ++i) out.emplace_back(LevelName(i));
    return out;
  }
  std::set<std::string> values;
  std::lock_guard lock(mu_);
  for (const auto& [id, s] : streams_) {
    if (!Overlaps(s->min_time, s->max_time, start_ns, end_ns)) continue;
    for (const auto& l : *s->labels) {
      if (l.name == name && !l.value.empty()) values.insert(l.value);
    }
  }
  return {values.begin(), values.end()};
}

}  // namespace vigil::logstore
