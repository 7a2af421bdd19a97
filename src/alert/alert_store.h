// Where alert state survives a restart (docs/alerts.md "State"): the pending
// and firing alerts, the history of resolved ones, and what each
// notification group last told its channel, in one SQLite file
// ($VIGIL_HOME/data/alerts.db, WAL mode), so that after a restart nothing
// that already fired fires or is notified again.
//
// The silences (silence.h) live there too, one row each; expired ones are
// pruned `silence_retention_ms` after they ended.
//
// Each alert occurrence is one row keyed by (id, active_at_ms): an alert
// that fires, resolves and fires again is two history rows. History keeps
// at most `max_history` resolved rows and none older than
// `history_retention_ms`.
//
// Thread safety: an AlertStore is used by one thread at a time (the engine
// holds its mutex around every call).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alert/alert.h"
#include "alert/dispatch.h"
#include "alert/silence.h"
#include "core/status.h"

namespace vigil::store {
class SqliteDb;
}

namespace vigil::alert {

struct AlertStoreOptions {
  std::string path;  // "" keeps everything in memory (tests, `vigil agent`)
  size_t max_history = 10'000;
  int64_t history_retention_ms = 30LL * 24 * 3600'000;
  int64_t silence_retention_ms = kSilenceRetentionMs;
};

class AlertStore {
 public:
  static Result<std::unique_ptr<AlertStore>> Open(AlertStoreOptions options);
  ~AlertStore();

  // Writes the alerts' current state (new, changed or resolved), in one
  // transaction.
  Status Save(const std::vector<Alert>& alerts, int64_t now_ms);
  // Pending and firing alerts, as last saved.
  Result<std::vector<Alert>> Active() const;
  // Resolved alerts, newest first, at most `limit`.
  Result<std::vector<Alert>> History(size_t limit) const;

  Status SaveGroup(const GroupRecord& group);
  Status DeleteGroup(const std::string& key);
  Result<std::vector<GroupRecord>> Groups() const;

  // Adds or replaces a silence (by id).
  Status SaveSilence(const Silence& silence);
  // Every saved silence; rows this version cannot read are skipped.
  Result<std::vector<Silence>> Silences() const;
  // Deletes the silences that ended before now_ms - silence_retention_ms.
  Status PruneSilences(int64_t now_ms);

  // The connection, for what keeps its own tables in alerts.db and commits
  // with the store (the delivery log); same thread rule as the store.
  store::SqliteDb* db() { return db_.get(); }

 private:
  AlertStore(AlertStoreOptions options, std::unique_ptr<store::SqliteDb> db);
  Status Trim(int64_t now_ms);

  AlertStoreOptions options_;
  std::unique_ptr<store::SqliteDb> db_;
};

}  // namespace vigil::alert
