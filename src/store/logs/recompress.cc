#include "store/logs/recompress.h"

#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "store/common/sqlite.h"
#include "store/logs/format.h"

namespace vigil::logstore {
namespace {

using store::SqliteDb;
using store::SqliteStmt;
using store::SqliteTxn;

constexpr int64_t kDayMs = int64_t{86400} * 1000;

struct CctxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

uint64_t FileBytes(Env* env, const std::string& path) {
  uint64_t total = 0;
  for (const char* suffix : {"", "-wal"}) {
    auto size = env->FileSize(path + suffix);
    if (size.ok()) total += *size;
  }
  return total;
}

Result<int64_t> QueryInt(SqliteDb* db, const std::string& sql) {
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt s, db->Prepare(sql));
  Status st;
  if (s.Step(&st)) return s.ColumnInt64(0);
  VIGIL_RETURN_IF_ERROR(st);
  return int64_t{0};  // no row
}

struct PendingBlob {
  int64_t id;
  std::string data;
};

}  // namespace

void ArchiveStats::Add(const ArchiveStats& o) {
  blocks += o.blocks;
  recompressed += o.recompressed;
  kept += o.kept;
  skipped += o.skipped;
  data_before += o.data_before;
  data_after += o.data_after;
  raw_bytes += o.raw_bytes;
  file_before += o.file_before;
  file_after += o.file_after;
  files += o.files;
  vacuumed = vacuumed || o.vacuumed;
  finished = finished && o.finished;
  compress_seconds += o.compress_seconds;
  context_bytes = std::max(context_bytes, o.context_bytes);
  errors.insert(errors.end(), o.errors.begin(), o.errors.end());
}

struct Archiver::Impl {
  ArchiveOptions o;
  Env* env;
  std::unique_ptr<ZSTD_CCtx, CctxFree> cctx{ZSTD_createCCtx()};
  std::unique_ptr<ZSTD_DCtx, DctxFree> dctx{ZSTD_createDCtx()};
  std::string raw, check;  // one block's payload, and its round trip
  DecodedBlock decoded;
  int64_t deadline_ms = 0;  // 0: none
  uint64_t blocks_left = UINT64_MAX;

  Status SetParameters();
  uint64_t done = 0;  // blocks in this call: the first is never refused
  bool OutOfBudget() const {
    return blocks_left == 0 ||
           (deadline_ms > 0 && done > 0 && env->MonotonicMillis() >= deadline_ms);
  }
  void StartCall() {
    deadline_ms = o.budget_ms > 0 ? env->MonotonicMillis() + o.budget_ms : 0;
    blocks_left = o.max_blocks;
    done = 0;
  }
  Status Recompress(std::string_view data, std::string* out, ArchiveStats* stats);
  Status Run(const std::string& path, ArchiveStats* stats);
  Status Flush(SqliteDb* db, std::vector<PendingBlob>* pending, int64_t through);
  Status MaybeVacuum(SqliteDb* db, ArchiveStats* stats);
};

Status Archiver::Impl::SetParameters() {
  if (!cctx || !dctx) return ResourceExhausted("archive: cannot allocate a zstd context");
  const std::pair<ZSTD_cParameter, int> params[] = {
      {ZSTD_c_compressionLevel, o.level},     {ZSTD_c_windowLog, o.window_log},
      {ZSTD_c_chainLog, o.chain_log},         {ZSTD_c_hashLog, o.hash_log},
      {ZSTD_c_searchLog, o.search_log},       {ZSTD_c_minMatch, o.min_match},
      {ZSTD_c_targetLength, o.target_length}, {ZSTD_c_strategy, o.strategy}};
  for (const auto& [param, value] : params) {
    size_t rc = ZSTD_CCtx_setParameter(cctx.get(), param, value);
    if (ZSTD_isError(rc)) {
      return InvalidArgument(std::string("archive: zstd parameter ") + std::to_string(param) +
                             " = " + std::to_string(value) + ": " + ZSTD_getErrorName(rc));
    }
  }
  return Status::Ok();
}

// The blob is a header (format byte, sizes) and one or two zstd frames
// (docs/logstore.md "Blocks"). DecodeBlock checks the whole blob first, so a
// blob that is not a readable block is never rewritten; the header bytes are
// then kept verbatim and each frame is replaced by a stronger one of the
// same bytes when that is smaller (digits gain little at middle levels, the
// skeleton much).
Status Archiver::Impl::Recompress(std::string_view data, std::string* out, ArchiveStats* stats) {
  VIGIL_RETURN_IF_ERROR(DecodeBlock(data, &decoded));
  VIGIL_ASSIGN_OR_RETURN(BlockParts parts, SplitBlock(data));
  out->assign(parts.header);
  for (const BlockFrame& frame : parts.frames) {
    raw.resize(frame.raw_size);
    size_t n = ZSTD_decompressDCtx(dctx.get(), raw.data(), raw.size(), frame.data.data(),
                                   frame.data.size());
    if (ZSTD_isError(n) || n != frame.raw_size) return Corruption("log block: bad zstd data");
    stats->raw_bytes += frame.raw_size;

    const size_t start = out->size();
    out->resize(start + ZSTD_compressBound(raw.size()));
    auto c0 = std::chrono::steady_clock::now();
    n = ZSTD_compress2(cctx.get(), out->data() + start, out->size() - start, raw.data(),
                       raw.size());
    stats->compress_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    if (ZSTD_isError(n)) return Internal(std::string("archive: zstd: ") + ZSTD_getErrorName(n));
    out->resize(start + n);
    stats->context_bytes = std::max(stats->context_bytes, ZSTD_sizeof_CCtx(cctx.get()));
    // Never replace a readable block by one that does not round-trip.
    check.resize(raw.size());
    n = ZSTD_decompressDCtx(dctx.get(), check.data(), check.size(), out->data() + start,
                            out->size() - start);
    if (ZSTD_isError(n) || n != raw.size() || check != raw) {
      return Internal("archive: recompressed block does not round-trip");
    }
    if (out->size() - start >= frame.data.size()) {
      out->resize(start);
      out->append(frame.data);
    }
  }
  return Status::Ok();
}

Status Archiver::Impl::Flush(SqliteDb* db, std::vector<PendingBlob>* pending, int64_t through) {
  SqliteTxn txn(db);
  VIGIL_RETURN_IF_ERROR(txn.Begin());
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt update, db->Prepare("UPDATE blocks SET data = ? WHERE id = ?"));
  for (const PendingBlob& p : *pending) {
    update.BindBlob(1, p.data);
    update.BindInt64(2, p.id);
    VIGIL_RETURN_IF_ERROR(update.Run());
  }
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt mark,
                         db->Prepare("INSERT INTO archive(key, value) VALUES('archived_through', ?)"
                                     " ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  mark.BindInt64(1, through);
  VIGIL_RETURN_IF_ERROR(mark.Run());
  VIGIL_RETURN_IF_ERROR(txn.Commit());
  pending->clear();
  return Status::Ok();
}

Status Archiver::Impl::MaybeVacuum(SqliteDb* db, ArchiveStats* stats) {
  VIGIL_ASSIGN_OR_RETURN(int64_t page_size, QueryInt(db, "PRAGMA page_size"));
  VIGIL_ASSIGN_OR_RETURN(int64_t pages, QueryInt(db, "PRAGMA page_count"));
  VIGIL_ASSIGN_OR_RETURN(int64_t free_pages, QueryInt(db, "PRAGMA freelist_count"));
  const auto free_bytes = static_cast<uint64_t>(free_pages * page_size);
  if (free_bytes < o.vacuum_min_bytes ||
      static_cast<double>(free_pages) < o.vacuum_min_fraction * static_cast<double>(pages)) {
    return Status::Ok();
  }
  // In place, not VACUUM INTO + rename: the store keeps its own connection
  // to this file, which must go on seeing the same file. VACUUM is one
  // transaction (the copy goes through the WAL) and keeps the row ids the
  // store holds (`id INTEGER PRIMARY KEY`); readers keep their snapshot.
  VIGIL_RETURN_IF_ERROR(db->Exec("VACUUM"));
  stats->vacuumed = true;
  // Copy the WAL back and truncate it, or it stays as large as the file.
  // Busy readers only delay this; SQLite checkpoints later.
  (void)db->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return Status::Ok();
}

Status Archiver::Impl::Run(const std::string& path, ArchiveStats* stats) {
  if (!env->FileExists(path)) return NotFound("archive: no partition " + path);
  stats->files = 1;
  stats->file_before = stats->file_after = FileBytes(env, path);
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  VIGIL_RETURN_IF_ERROR(db->Exec("PRAGMA cache_size=-256"));  // as the store's
  VIGIL_ASSIGN_OR_RETURN(int64_t is_partition,
                         QueryInt(db.get(),
                                  "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                                  " name = 'blocks'"));
  if (is_partition == 0) return FailedPrecondition("archive: " + path + " has no blocks table");
  int64_t through = 0;
  if (!o.dry_run) {
    VIGIL_RETURN_IF_ERROR(
        db->Exec("CREATE TABLE IF NOT EXISTS archive(key TEXT PRIMARY KEY, value INTEGER NOT NULL)"
                 " WITHOUT ROWID"));
    VIGIL_ASSIGN_OR_RETURN(
        through, QueryInt(db.get(), "SELECT value FROM archive WHERE key = 'archived_through'"));
  }
  // One block per statement, so no read transaction stays open while a
  // block is compressed (it would hold back the WAL's checkpoints).
  VIGIL_ASSIGN_OR_RETURN(
      SqliteStmt next, db->Prepare("SELECT id, data FROM blocks WHERE id > ? ORDER BY id LIMIT 1"));
  std::vector<PendingBlob> pending;
  size_t pending_bytes = 0;
  int64_t last = through;
  std::string data, blob;
  for (;;) {
    if (OutOfBudget()) {
      stats->finished = false;
      break;
    }
    next.BindInt64(1, last);
    Status st;
    if (!next.Step(&st)) {
      VIGIL_RETURN_IF_ERROR(st);
      next.Reset();
      break;
    }
    const int64_t id = next.ColumnInt64(0);
    data.assign(next.ColumnBlob(1));
    next.Reset();  // ends the read before the block is compressed
    ++stats->blocks;
    --blocks_left;
    ++done;
    stats->data_before += data.size();
    Status rs = Recompress(data, &blob, stats);
    if (!rs.ok()) {
      ++stats->skipped;
      stats->data_after += data.size();
      stats->errors.push_back(path + ": block " + std::to_string(id) +
                              " left as it is: " + rs.ToString());
    } else if (blob.size() < data.size()) {
      ++stats->recompressed;
      stats->data_after += blob.size();
      if (!o.dry_run) {
        // A copy of its own size: blob keeps the compress bound's capacity.
        pending_bytes += blob.size();
        pending.push_back({id, std::string(blob)});
      }
    } else {
      ++stats->kept;
      stats->data_after += data.size();
    }
    last = id;
    if (pending_bytes >= o.txn_max_bytes && !o.dry_run) {
      VIGIL_RETURN_IF_ERROR(Flush(db.get(), &pending, last).WithContext(path));
      pending_bytes = 0;
    }
  }
  if (o.dry_run) return Status::Ok();
  if (last > through) VIGIL_RETURN_IF_ERROR(Flush(db.get(), &pending, last).WithContext(path));
  if (stats->finished) VIGIL_RETURN_IF_ERROR(MaybeVacuum(db.get(), stats).WithContext(path));
  db.reset();
  stats->file_after = FileBytes(env, path);
  return Status::Ok();
}

Archiver::Archiver(ArchiveOptions options, Env* env) : impl_(std::make_unique<Impl>()) {
  impl_->o = options;
  impl_->env = env != nullptr ? env : Env::Default();
}

Archiver::~Archiver() = default;

bool Archiver::Due(int64_t day) const {
  const int64_t age = impl_->env->NowMillis() - (day + 1) * kDayMs;  // since the day ended
  return age >= impl_->o.min_age_ms && (impl_->o.max_age_ms <= 0 || age <= impl_->o.max_age_ms);
}

Status Archiver::ArchivePartition(const std::string& path, ArchiveStats* stats) {
  Impl& m = *impl_;
  VIGIL_RETURN_IF_ERROR(m.SetParameters());
  m.StartCall();
  ArchiveStats one;
  Status st = m.Run(path, &one);
  stats->Add(one);
  return st;
}

Status Archiver::ArchiveDir(const std::string& dir, ArchiveStats* stats) {
  Impl& m = *impl_;
  VIGIL_RETURN_IF_ERROR(m.SetParameters());
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, m.env->ListDir(dir));
  std::vector<std::pair<int64_t, std::string>> days;
  for (const std::string& name : names) {
    int64_t day = ParsePartitionFileName(name);
    if (day >= 0 && Due(day)) days.emplace_back(day, dir + "/" + name);
  }
  std::sort(days.begin(), days.end());
  m.StartCall();
  for (const auto& [day, path] : days) {
    if (m.OutOfBudget()) {
      stats->finished = false;
      break;
    }
    ArchiveStats one;
    Status st = m.Run(path, &one);
    stats->Add(one);
    if (!st.ok()) stats->errors.push_back(st.ToString());
  }
  return Status::Ok();
}

}  // namespace vigil::logstore
