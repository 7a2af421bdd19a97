#include "wire/log_batch.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "core/coding.h"

namespace vigil::wire {
namespace {
// Version 2 adds lost_bytes after truncated_lines in every stream header.
constexpr uint64_t kFirstVersionWithLostBytes = 2;

constexpr std::array<const char*, kLogLevelCount> kLevelNames = {
    "unknown", "trace", "debug", "info", "warn", "error", "fatal"};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}
}  // namespace

const char* LogLevelName(LogLevel level) {
  auto i = static_cast<size_t>(level);
  return i < kLevelNames.size() ? kLevelNames[i] : "unknown";
}

bool ParseLogLevelName(std::string_view name, LogLevel* level) {
  for (size_t i = 0; i < kLevelNames.size(); ++i) {
    if (EqualsIgnoreCase(name, kLevelNames[i])) {
      *level = static_cast<LogLevel>(i);
      return true;
    }
  }
  struct Alias {
    const char* name;
    LogLevel level;
  };
  static constexpr Alias kAliases[] = {
      {"warning", LogLevel::kWarn},     {"err", LogLevel::kError},
      {"critical", LogLevel::kFatal},   {"crit", LogLevel::kFatal},
      {"panic", LogLevel::kFatal},      {"emerg", LogLevel::kFatal},
      {"alert", LogLevel::kFatal},      {"notice", LogLevel::kInfo},
      {"information", LogLevel::kInfo}, {"dbg", LogLevel::kDebug},
      {"trc", LogLevel::kTrace},        {"wrn", LogLevel::kWarn},
      {"eror", LogLevel::kError},       {"informational", LogLevel::kInfo},
  };
  for (const Alias& a : kAliases) {
    if (EqualsIgnoreCase(name, a.name)) {
      *level = a.level;
      return true;
    }
  }
  return false;
}

size_t LogBatch::RecordCount() const {
  size_t n = 0;
  for (const auto& s : streams) n += s.records.size();
  return n;
}

size_t LogBatch::ByteCount() const {
  size_t n = 0;
  for (const auto& s : streams) {
    for (const auto& r : s.records) n += r.line.size();
  }
  return n;
}

std::string EncodeLogBatch(const LogBatch& batch) {
  // Label names and values repeat across streams (job, node, ...): a string
  // table sends each once.
  std::unordered_map<std::string_view, uint64_t> index;
  std::vector<std::string_view> symbols;
  auto ref = [&](std::string_view s) {
    auto [it, inserted] = index.try_emplace(s, symbols.size());
    if (inserted) symbols.push_back(s);
    return it->second;
  };
  int64_t base = 0;
  for (const auto& s : batch.streams) {
    if (!s.records.empty()) {
      base = s.records.front().time_ns;
      break;
    }
  }
  // The oldest version that holds everything: a batch without losses reads
  // as before on a server that knows only version 1.
  const bool any_lost = std::any_of(batch.streams.begin(), batch.streams.end(),
                                    [](const LogStream& s) { return s.counters.lost_bytes != 0; });
  const uint64_t version = any_lost ? kFirstVersionWithLostBytes : 1;
  std::string body;
  PutVarint64(&body, batch.streams.size());
  for (const auto& s : batch.streams) {
    PutLengthPrefixed(&body, s.source_id);
    PutVarint64(&body, s.labels.size());
    for (const auto& l : s.labels) {
      PutVarint64(&body, ref(l.name));
      PutVarint64(&body, ref(l.value));
    }
    PutVarint64(&body, s.start_offset);
    PutVarint64(&body, s.end_offset);
    PutVarint64(&body, s.counters.sampled_lines);
    PutVarint64(&body, s.counters.filtered_lines);
    PutVarint64(&body, s.counters.truncated_lines);
    if (version >= kFirstVersionWithLostBytes) PutVarint64(&body, s.counters.lost_bytes);
    PutVarint64(&body, s.records.size());
    int64_t prev_t = base;
    uint64_t prev_off = s.start_offset;
    for (const auto& r : s.records) {
      PutVarsint64(&body, r.time_ns - prev_t);
      prev_t = r.time_ns;
      PutVarint64(&body, r.offset - prev_off);
      prev_off = r.offset;
      body.push_back(static_cast<char>(r.level));
      body.push_back(static_cast<char>(r.flags));
      PutLengthPrefixed(&body, r.line);
    }
  }
  std::string out;
  out.reserve(body.size() + 64);
  PutVarint64(&out, version);
  PutLengthPrefixed(&out, batch.source);
  PutVarint64(&out, batch.sequence);
  PutVarsint64(&out, base);
  PutVarint64(&out, symbols.size());
  for (std::string_view s : symbols) PutLengthPrefixed(&out, s);
  out += body;
  return out;
}

Result<LogBatch> DecodeLogBatch(std::string_view in) {
  auto bad = [](const std::string& what) {
    return InvalidArgument("malformed log batch: " + what);
  };
  LogBatch b;
  PayloadHead head;
  VIGIL_RETURN_IF_ERROR(DecodePayloadHead(&in, "log batch", kLogPayloadVersion, &head));
  const bool has_lost_bytes = head.version >= kFirstVersionWithLostBytes;
  b.source.assign(head.source);
  b.sequence = head.sequence;
  const int64_t base = head.base_time;
  const std::vector<std::string_view>& syms = head.symbols;
  auto symbol = [&](std::string_view* out) {
    uint64_t r;
    if (!GetVarint64(&in, &r) || r >= syms.size()) return false;
    *out = syms[r];
    return true;
  };

  uint64_t nstreams;
  if (!GetVarint64(&in, &nstreams) || nstreams > in.size()) return bad("bad stream count");
  b.streams.reserve(nstreams);
  for (uint64_t i = 0; i < nstreams; ++i) {
    LogStream s;
    std::string_view source_id;
    uint64_t nlabels;
    if (!GetLengthPrefixed(&in, &source_id) || !GetVarint64(&in, &nlabels)) {
      return bad("truncated stream");
    }
    if (source_id.empty() || source_id.size() > kMaxLabelBytes) {
      return bad("stream source id empty or too long");
    }
    s.source_id.assign(source_id);
    if (nlabels > kMaxLogLabels) return bad("too many labels on a stream");
    s.labels.reserve(nlabels + 1);
    for (uint64_t j = 0; j < nlabels; ++j) {
      std::string_view name, value;
      if (!symbol(&name) || !symbol(&value)) return bad("truncated label");
      if (name.empty() || name.size() > kMaxLabelBytes || value.size() > kMaxLabelBytes) {
        return bad("label name empty or label too long");
      }
      s.labels.push_back({std::string(name), std::string(value)});
    }
    if (!SortedUniqueNames(s.labels)) return bad("labels not sorted or duplicated");
    uint64_t nrecords;
    if (!GetVarint64(&in, &s.start_offset) || !GetVarint64(&in, &s.end_offset) ||
        !GetVarint64(&in, &s.counters.sampled_lines) ||
        !GetVarint64(&in, &s.counters.filtered_lines) ||
        !GetVarint64(&in, &s.counters.truncated_lines) ||
        (has_lost_bytes && !GetVarint64(&in, &s.counters.lost_bytes)) ||
        !GetVarint64(&in, &nrecords)) {
      return bad("truncated stream header");
    }
    if (s.end_offset < s.start_offset) return bad("stream end offset before its start");
    // A record takes at least 5 bytes, which bounds the allocation below.
    if (nrecords > in.size() / 5) return bad("bad record count");
    s.records.reserve(nrecords);
    int64_t t = base;
    uint64_t off = s.start_offset;
    for (uint64_t j = 0; j < nrecords; ++j) {
      LogRecord r;
      int64_t dt;
      uint64_t doff;
      std::string_view line;
      if (!GetVarsint64(&in, &dt) || !GetVarint64(&in, &doff) || in.size() < 2) {
        return bad("truncated record");
      }
      auto level = static_cast<uint8_t>(in[0]);
      r.flags = static_cast<uint8_t>(in[1]);
      in.remove_prefix(2);
      if (level >= kLogLevelCount) return bad("unknown log level " + std::to_string(level));
      if (!GetLengthPrefixed(&in, &line)) return bad("truncated record line");
      if (line.size() > kMaxLogLineBytes) return bad("record line above 4 MiB");
      t += dt;
      off += doff;
      if (off < s.start_offset || off > s.end_offset)
        return bad("record offset outside its stream");
      r.time_ns = t;
      r.offset = off;
      r.level = static_cast<LogLevel>(level);
      r.line.assign(line);
      s.records.push_back(std::move(r));
    }
    b.streams.push_back(std::move(s));
  }
  if (!in.empty()) return bad("trailing bytes");
  return b;
}

}  // namespace vigil::wire
