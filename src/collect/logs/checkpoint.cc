#include "collect/logs/checkpoint.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/coding.h"
#include "core/log.h"
#include "core/strings.h"

namespace vigil::collect::logs {
namespace {

constexpr std::string_view kHeader = "vigil-tail-checkpoints v1";
constexpr std::string_view kFileName = "tail-checkpoints";
// A file larger than this is not a checkpoint file we wrote (max_entries
// lines of at most a few KiB each).
constexpr size_t kMaxFileBytes = 64u << 20;
constexpr size_t kMaxPathBytes = 4096;

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

std::optional<uint64_t> ParseHex64(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

// Paths are bytes; the line format splits on spaces and newlines, so those,
// '%' and control bytes are written as %XX.
std::string EscapePath(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  for (char c : p) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == '%') {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> UnescapePath(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    auto v = ParseHex64(s.substr(i + 1, 2));
    if (!v) return std::nullopt;
    out += static_cast<char>(*v);
    i += 2;
  }
  return out;
}

Result<SourceCheckpoint> DecodeLine(std::string_view line) {
  auto f = Split(line, ' ');
  if (f.size() != 9)
    return Corruption("checkpoint line has " + std::to_string(f.size()) + " fields");
  SourceCheckpoint cp;
  auto dev = ParseUint64(f[0]);
  auto ino = ParseUint64(f[1]);
  auto fp_len = ParseUint64(f[2]);
  auto fp = ParseHex64(f[3]);
  auto gen = ParseUint64(f[4]);
  auto off = ParseUint64(f[5]);
  auto resume = ParseUint64(f[6]);
  auto updated = ParseInt64(f[7]);
  auto path = UnescapePath(f[8]);
  if (!dev || !ino || !fp_len || *fp_len > kFingerprintBytes || !fp || !gen || !off || !resume ||
      *resume > 2 || !updated || !path || path->empty() || path->size() > kMaxPathBytes) {
    return Corruption("bad checkpoint line");
  }
  cp.identity = {*dev, *ino, *fp, static_cast<uint32_t>(*fp_len), *gen};
  cp.offset = *off;
  cp.resume = static_cast<ResumeState>(*resume);
  cp.updated_ms = *updated;
  cp.path = std::move(*path);
  return cp;
}

}  // namespace

std::string SourceIdentity::SourceId() const {
  return "file:" + std::to_string(dev) + ":" + std::to_string(ino) + ":" + Hex64(fp) + ":" +
         std::to_string(generation);
}

std::string EncodeCheckpoints(std::span<const SourceCheckpoint> cps) {
  std::string body(kHeader);
  body += '\n';
  for (const auto& cp : cps) {
    const auto& id = cp.identity;
    body += std::to_string(id.dev) + ' ' + std::to_string(id.ino) + ' ' +
            std::to_string(id.fp_len) + ' ' + Hex64(id.fp) + ' ' + std::to_string(id.generation) +
            ' ' + std::to_string(cp.offset) + ' ' +
            std::to_string(static_cast<unsigned>(cp.resume)) + ' ' + std::to_string(cp.updated_ms) +
            ' ' + EscapePath(cp.path) + '\n';
  }
  char crc[32];
  std::snprintf(crc, sizeof(crc), "crc32c %08x\n", Crc32c(body));
  return body + crc;
}

Result<std::vector<SourceCheckpoint>> DecodeCheckpoints(std::string_view data) {
  // The trailer is the last line; the CRC covers everything before it.
  if (data.empty() || data.back() != '\n') return Corruption("checkpoint file has no trailer");
  size_t nl = data.substr(0, data.size() - 1).rfind('\n');
  if (nl == std::string_view::npos) return Corruption("checkpoint file has no trailer");
  std::string_view body = data.substr(0, nl + 1);
  std::string_view trailer = data.substr(nl + 1, data.size() - nl - 2);
  if (!StartsWith(trailer, "crc32c ")) return Corruption("checkpoint file has no crc32c trailer");
  auto crc = ParseHex64(trailer.substr(7));
  if (!crc || *crc != Crc32c(body)) return Corruption("checkpoint file fails its checksum");
  auto lines = Split(body.substr(0, body.size() - 1), '\n');
  if (lines.empty() || lines[0] != kHeader) return Corruption("checkpoint file has a bad header");
  std::vector<SourceCheckpoint> out;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto cp = DecodeLine(lines[i]);
    if (!cp.ok()) return cp.status().WithContext("line " + std::to_string(i + 1));
    out.push_back(std::move(cp).value());
  }
  return out;
}

Result<std::unique_ptr<CheckpointStore>> CheckpointStore::Open(Env* env, std::string state_dir,
                                                               CheckpointStoreOptions options) {
  if (options.max_entries == 0) return InvalidArgument("checkpoint store needs max_entries > 0");
  VIGIL_RETURN_IF_ERROR(env->CreateDirs(state_dir));
  std::string file = JoinPath(state_dir, kFileName);
  std::unique_ptr<CheckpointStore> store(new CheckpointStore(env, file, options));
  if (!env->FileExists(file)) return store;
  VIGIL_ASSIGN_OR_RETURN(std::string data, env->ReadFile(file, kMaxFileBytes + 1));
  Result<std::vector<SourceCheckpoint>> cps =
      data.size() > kMaxFileBytes ? Result<std::vector<SourceCheckpoint>>(Corruption("too large"))
                                  : DecodeCheckpoints(data);
  if (!cps.ok()) {
    // Refusing to start would stop all log collection over a file we can
    // rebuild; re-reading is safe because the server deduplicates offsets.
    std::string aside = file + ".corrupt";
    Logf(LogLevel::kWarn, "tail checkpoints %s unreadable (%s); moved to %s, starting empty",
         file.c_str(), cps.status().ToString().c_str(), aside.c_str());
    VIGIL_RETURN_IF_ERROR(env->RenameFile(file, aside));
    store->recovered_ = true;
    return store;
  }
  for (auto& cp : *cps) store->entries_[cp.source_id()] = std::move(cp);
  store->EvictLocked();
  return store;
}

void CheckpointStore::PutLocked(const SourceCheckpoint& cp, int64_t now_ms) {
  std::string id = cp.source_id();
  auto it = entries_.find(id);
  if (it != entries_.end() && it->second.offset > cp.offset) return;  // never backwards
  SourceCheckpoint v = cp;
  v.updated_ms = now_ms;
  entries_[id] = std::move(v);
}

void CheckpointStore::EvictLocked() {
  if (entries_.size() <= options_.max_entries) return;
  std::vector<std::pair<int64_t, std::string>> by_age;
  by_age.reserve(entries_.size());
  for (const auto& [id, cp] : entries_) by_age.emplace_back(cp.updated_ms, id);
  std::sort(by_age.begin(), by_age.end());
  size_t drop = entries_.size() - options_.max_entries;
  for (size_t i = 0; i < drop; ++i) entries_.erase(by_age[i].second);
}

Status CheckpointStore::PersistLocked() {
  std::vector<SourceCheckpoint> all;
  all.reserve(entries_.size());
  for (const auto& [id, cp] : entries_) all.push_back(cp);
  Status st =
      env_->WriteFileAtomic(file_, EncodeCheckpoints(all)).WithContext("save tail checkpoints");
  if (st.ok()) {
    dirty_ = false;
    last_persist_ms_ = env_->MonotonicMillis();
  }
  return st;
}

bool CheckpointStore::DueLocked() const {
  return env_->MonotonicMillis() - last_persist_ms_ >= options_.ack_persist_interval_ms;
}

Status CheckpointStore::PersistIfDue() {
  std::lock_guard lock(mu_);
  if (!dirty_ || !DueLocked()) return Status::Ok();
  return PersistLocked();
}

Status CheckpointStore::Flush() {
  std::lock_guard lock(mu_);
  if (!dirty_) return Status::Ok();
  return PersistLocked();
}

bool CheckpointStore::dirty() const {
  std::lock_guard lock(mu_);
  return dirty_;
}

Status CheckpointStore::Commit(const SourceCheckpoint& cp) {
  return CommitMany(std::span<const SourceCheckpoint>(&cp, 1));
}

Status CheckpointStore::CommitMany(std::span<const SourceCheckpoint> cps, Persist when) {
  for (const auto& cp : cps) {
    if (cp.path.empty() || cp.path.size() > kMaxPathBytes) {
      return InvalidArgument("checkpoint path must be 1.." + std::to_string(kMaxPathBytes) +
                             " bytes");
    }
    if (cp.identity.fp_len > kFingerprintBytes) return InvalidArgument("checkpoint fp_len too big");
  }
  std::lock_guard lock(mu_);
  int64_t now = env_->NowMillis();
  for (const auto& cp : cps) PutLocked(cp, now);
  EvictLocked();
  dirty_ = true;
  if (when == Persist::kWhenDue && !DueLocked()) return Status::Ok();
  return PersistLocked();
}

Status CheckpointStore::Forget(const std::string& source_id) {
  return ForgetMany(std::span<const std::string>(&source_id, 1));
}

Status CheckpointStore::ForgetMany(std::span<const std::string> source_ids) {
  std::lock_guard lock(mu_);
  size_t erased = 0;
  for (const auto& id : source_ids) erased += entries_.erase(id);
  if (erased == 0) return Status::Ok();
  return PersistLocked();
}

std::optional<SourceCheckpoint> CheckpointStore::Get(const std::string& source_id) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(source_id);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::vector<SourceCheckpoint> CheckpointStore::ForPath(const std::string& path) const {
  std::vector<SourceCheckpoint> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, cp] : entries_) {
      if (cp.path == path) out.push_back(cp);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.updated_ms < b.updated_ms; });
  return out;
}

std::vector<SourceCheckpoint> CheckpointStore::All() const {
  std::lock_guard lock(mu_);
  std::vector<SourceCheckpoint> out;
  out.reserve(entries_.size());
  for (const auto& [id, cp] : entries_) out.push_back(cp);
  return out;
}

size_t CheckpointStore::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace vigil::collect::logs
