// The in-app inbox (docs/notify.md "Inbox"): every alert the dispatcher
// hands to the inbox receiver (kInboxReceiver: it takes every alert, of
// every severity) becomes an item — once when it fires, once when it
// resolves — for the recipients it is for (recipients.h), read or unread per
// recipient. A notification a channel's cap held back (an SMS past its daily
// cap) lands here too, as a `held_back` item saying so, so nothing a cap
// stops is lost silently.
//
// An item is keyed by (alert id, kind, time): a repeat notification or a
// restart that hands the same group out again adds nothing. Items are kept
// `retention_ms`, at most `max_items`.
//
// Recipients: an item lists the recipients it is for; one for nobody in
// particular (no recipients configured) is everyone's. A recipient's view
// holds their items and everyone's; the view of "" (no recipient chosen)
// holds every item. Read marks are per recipient ("" too).
//
// The tables live in alerts.db, on the alert store's connection.
//
// Thread safety: none; the engine holds its mutex around every call.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "alert/notification.h"
#include "alert/recipients.h"
#include "core/status.h"

namespace vigil::store {
class SqliteDb;
}

namespace vigil::alert {

struct InboxOptions {
  int64_t retention_ms = 30LL * 24 * 3600'000;
  size_t max_items = 10'000;
};

struct InboxItem {
  int64_t id = 0;
  std::string kind;  // "firing", "resolved", "held_back"
  int64_t at_ms = 0;
  Alert alert;                          // as it was then
  std::vector<std::string> recipients;  // empty: everyone's
  std::string note;                     // held_back: which channel and why
  bool read = false;                    // for the recipient asked about
};

struct InboxFilter {
  std::string recipient;  // "" : every item
  std::optional<Severity> severity;
  bool unread_only = false;
  int64_t before_id = 0;  // > 0: older items only (paging)
  size_t limit = 100;
};

struct InboxCounts {
  int64_t total = 0;
  int64_t unread = 0;
  std::map<Severity, int64_t> unread_by_severity;
};

class Inbox {
 public:
  static constexpr size_t kMaxNoteBytes = 512;
  static constexpr size_t kMaxListed = 500;

  // Creates the tables on `db` (not owned; it outlives the inbox).
  static Result<std::unique_ptr<Inbox>> Open(store::SqliteDb* db, InboxOptions options,
                                             std::vector<Recipient> recipients);

  // The items a notification to the inbox brings (see above); returns how
  // many are new. Call inside the caller's transaction to commit them with
  // the group's record.
  Result<int> Add(const Notification& n, int64_t now_ms);
  // One held_back item per alert of `n`, which channel `n.receiver` did not
  // send because `why` (its cap).
  Status AddHeldBack(const Notification& n, const std::string& why, int64_t now_ms);

  // Newest first.
  Result<std::vector<InboxItem>> List(const InboxFilter& filter) const;
  Result<InboxCounts> Counts(const std::string& recipient) const;
  // Marks `ids` (all of the recipient's view when empty) read or unread for
  // `recipient`; returns how many items changed.
  Result<int64_t> Mark(const std::string& recipient, const std::vector<int64_t>& ids, bool read);
  // The recipients new items are for (a live reload of config.json's);
  // items already added keep theirs.
  void SetRecipients(std::vector<Recipient> recipients) { recipients_ = std::move(recipients); }

 private:
  Inbox(store::SqliteDb* db, InboxOptions options, std::vector<Recipient> recipients)
      : db_(db), options_(options), recipients_(std::move(recipients)) {}
  Status Insert(const Alert& a, const std::string& kind, int64_t at_ms, const std::string& note,
                bool* added);
  Status Trim(int64_t now_ms);

  store::SqliteDb* db_;
  InboxOptions options_;
  std::vector<Recipient> recipients_;
};

}  // namespace vigil::alert
