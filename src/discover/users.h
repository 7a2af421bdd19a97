// Who runs a process: its real uid (the first field of the `Uid:` line of
// /proc/<pid>/status) and the name this node's user database gives it. A
// job's owner is its anchor's (docs/jobs.md "Owner"), so an alert about a
// crashed run can name, and reach, the researcher who started it.
//
// The real uid, not the effective one: a setuid helper or a `sudo -u` keeps
// the person's real uid, and /proc/<pid>'s owner (the effective uid, or root
// for a process that is not dumpable) would name the wrong one.
//
// Names come from getpwuid_r, which may ask NSS (LDAP, sssd) over the
// network, so they are cached: at most max_entries uids, each asked again
// after ttl_ms, so a user added to the node (or a container's uid given a
// name) shows within minutes. A uid with no name (a container-only user) is
// named by its decimal digits, as `ls -l` does.
//
// Thread safety: ParseRealUid and ReadRealUid are pure; UserNames is
// internally locked (mu_ guards the cache) and safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/env.h"

namespace vigil::discover {

// The uid of no one: unreadable, or not known (history of older versions).
inline constexpr int64_t kUnknownUid = -1;
// The `Uid:` line is the 9th of status, ~200 bytes in; the rest is not read.
inline constexpr size_t kMaxStatusHeadBytes = 1024;

// The real uid in the text of /proc/<pid>/status, kUnknownUid when there is
// no `Uid:` line or it holds no uid (4294967295 is (uid_t)-1, no uid either).
int64_t ParseRealUid(std::string_view status);
// Reads /proc/<pid>/status; kUnknownUid when it cannot be read.
int64_t ReadRealUid(Env* env, const std::string& proc_root, int pid);

struct UserNamesOptions {
  Env* env = nullptr;  // its monotonic clock ages entries; nullptr: Env::Default()
  int64_t ttl_ms = 5 * 60'000;
  size_t max_entries = 1024;
  // Replaces getpwuid_r (tests): the name of a uid, nullopt when it has none.
  std::function<std::optional<std::string>(uint32_t)> lookup;
};

class UserNames {
 public:
  explicit UserNames(UserNamesOptions options = {});
  UserNames(const UserNames&) = delete;
  UserNames& operator=(const UserNames&) = delete;

  // The process-wide cache detection uses when given none. Never deleted.
  static UserNames* Default();

  // The name of `uid`, its decimal digits when it has none, "" for
  // kUnknownUid (or any uid out of range).
  std::string NameOf(int64_t uid);

  // How many times the database was asked (tests).
  size_t lookups() const;

 private:
  struct Entry {
    std::string name;
    int64_t at_ms = 0;
  };
  std::string Lookup(uint32_t uid);

  UserNamesOptions options_;
  Env* env_;
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, Entry> by_uid_;  // guarded by mu_
  size_t lookups_ = 0;                          // guarded by mu_
};

// The name of `uid` in the node's user database (getpwuid_r), nullopt when
// it has none or the database cannot answer.
std::optional<std::string> SystemUserName(uint32_t uid);

}  // namespace vigil::discover
