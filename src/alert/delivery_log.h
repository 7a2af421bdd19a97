// The delivery log (docs/notify.md "Delivery log"): every notification the
// dispatcher hands out is written here before its first attempt, and its
// attempts and outcome are recorded here, so that delivery survives a
// restart and a failing channel is visible.
//
// An entry is `pending` until its channel takes it (`delivered`), its cap
// holds it back on purpose (`capped`: the channel answered
// kResourceExhausted) or it is older than `max_age_ms` and still not taken
// (`failed`). Attempts follow an exponential backoff with jitter, from
// `initial_backoff_ms` to `max_backoff_ms`.
//
// At-least-once, never twice without a crash: Claim() commits the attempt
// (attempts + 1 and the next attempt's time) before the send, Finish()
// commits its outcome. A crash between the two leaves the entry pending with
// its next attempt already scheduled, so after a restart it is sent once
// more — the only case in which a receiver can see one entry twice. A
// delivered entry is never handed out again.
//
// Entries of one group go in order: an entry is not due while an older one
// of the same group key is pending (a "resolved" never overtakes its
// "firing"). A new entry of a group supersedes the group's older pending
// ones that are not being sent (state `superseded`): it already says what
// they said, and takes over the resolutions only they carried, so a channel
// that was down for an hour gets one message per group when it is back, not
// one per group_interval.
//
// The tables live in the alert store's database (alerts.db), on its
// connection, so that writing an entry and the group's record commit in one
// transaction.
//
// Thread safety: none; the engine holds its mutex around every call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "alert/notification.h"
#include "core/status.h"

namespace vigil::store {
class SqliteDb;
class SqliteStmt;
}  // namespace vigil::store

namespace vigil::alert {

enum class DeliveryState { kPending, kDelivered, kFailed, kCapped, kSuperseded };
const char* DeliveryStateName(DeliveryState s);
std::optional<DeliveryState> ParseDeliveryState(std::string_view s);

struct DeliveryLogOptions {
  int64_t initial_backoff_ms = 1000;
  int64_t max_backoff_ms = 5 * 60'000;
  int64_t max_age_ms = 24 * 3600'000;  // then a pending entry is failed
  // Finished entries are kept this long, and at most this many.
  int64_t retention_ms = 7 * 24 * 3600'000LL;
  size_t max_finished = 10'000;
};

struct DeliveryEntry {
  int64_t id = 0;
  std::string receiver;
  std::string group_key;
  std::vector<std::string> alert_ids;
  Notification notification;  // what is sent, as written
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t attempts = 0;
  int64_t next_attempt_ms = 0;
  DeliveryState state = DeliveryState::kPending;
  std::string last_answer;  // the receiver's last refusal, cut to kMaxAnswerBytes
};

struct DeliveryFilter {
  std::optional<DeliveryState> state;
  std::string receiver;  // "" for all
  size_t limit = 100;
};

// A channel's entries by state, and its newest refusal.
struct ChannelDeliveries {
  std::map<DeliveryState, int64_t> counts;
  std::string last_error;
  int64_t last_error_ms = 0;
  int64_t last_delivered_ms = 0;
  // Its newest finished attempt failed and entries still wait or failed:
  // the channel is not taking messages now.
  bool failing = false;
};

struct DeliverySummary {
  std::map<DeliveryState, int64_t> counts;
  std::map<std::string, ChannelDeliveries> channels;
};

class DeliveryLog {
 public:
  static constexpr size_t kMaxAnswerBytes = 512;

  // Creates the tables on `db` (not owned; it outlives the log).
  static Result<std::unique_ptr<DeliveryLog>> Open(store::SqliteDb* db, DeliveryLogOptions options);

  // Writes a pending entry due at once, superseding the group's older
  // pending entries but those `in_flight` (being sent; see above); returns
  // its id. Call inside the caller's transaction to commit it with the
  // group's record.
  Result<int64_t> Add(Notification n, int64_t now_ms, const std::set<int64_t>& in_flight = {});
  // Pending entries due at `now_ms`, oldest first, at most `limit`.
  Result<std::vector<DeliveryEntry>> Due(int64_t now_ms, size_t limit) const;
  // Pending entries of `receiver` that are next in their group, due or
  // not, oldest first, at most `limit`: what goes with a due one when its
  // channel merges groups (the others ride along on that attempt).
  Result<std::vector<DeliveryEntry>> Waiting(const std::string& receiver, size_t limit) const;
  // Before an attempt: counts it and schedules the next one (committed).
  Status Claim(int64_t id, int64_t now_ms);
  // After an attempt: its outcome (committed).
  Status Finish(int64_t id, const Status& outcome, int64_t now_ms);
  // Fails a pending entry now (its channel is no longer configured).
  Status Abandon(int64_t id, const std::string& why, int64_t now_ms);
  // When the next pending entry is due, or INT64_MAX.
  Result<int64_t> NextAttemptMs() const;

  // Newest first.
  Result<std::vector<DeliveryEntry>> List(const DeliveryFilter& filter) const;
  Result<DeliverySummary> Summary() const;

  // The wait before attempt `attempts` + 1 of entry `id`: doubling from the
  // initial backoff, capped, with ±20% jitter derived from (id, attempts).
  int64_t Backoff(int64_t id, int64_t attempts) const;

  const DeliveryLogOptions& options() const { return options_; }

 private:
  DeliveryLog(store::SqliteDb* db, DeliveryLogOptions options) : db_(db), options_(options) {}
  Status Trim(int64_t now_ms);
  Result<std::vector<DeliveryEntry>> Heads(const char* extra,
                                           const std::function<void(store::SqliteStmt*)>& bind,
                                           size_t limit) const;
  // The group's pending entries `n` supersedes; adds their resolutions to it.
  Result<std::vector<int64_t>> Supersede(Notification* n, const std::set<int64_t>& in_flight);

  store::SqliteDb* db_;
  DeliveryLogOptions options_;
};

// The notification as the log stores it, and back.
std::string NotificationJson(const Notification& n);

// Several due entries of one channel (different groups: Due never hands out
// two of one group) as one message: their alerts in order, each once, under
// the labels their groups share. Its group key names none of them (it is
// never written to the log; each entry keeps its own).
Notification MergeNotifications(const std::vector<DeliveryEntry>& entries);
Result<Notification> ParseNotification(std::string_view json);

}  // namespace vigil::alert
