#include "discover/users.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "core/strings.h"

namespace vigil::discover {
namespace {

constexpr int64_t kMaxUid = 4294967294;  // 4294967295 is (uid_t)-1: no uid
// A user name is short (useradd allows 32 bytes); a longer one from an odd
// NSS backend is cut, so a label or a message stays small.
constexpr size_t kMaxUserNameBytes = 256;
// getpwuid_r's buffer grows to this at most (a passwd entry with a huge
// gecos field); past it the uid is named by its digits.
constexpr size_t kMaxPasswdBuffer = 1 << 20;

}  // namespace

int64_t ParseRealUid(std::string_view status) {
  for (std::string_view line : Split(status, '\n')) {
    if (!StartsWith(line, "Uid:")) continue;
    std::vector<std::string_view> f = SplitFields(line.substr(4));
    if (f.empty()) return kUnknownUid;
    auto uid = ParseInt64(f[0]);
    return uid && *uid >= 0 && *uid <= kMaxUid ? *uid : kUnknownUid;
  }
  return kUnknownUid;
}

int64_t ReadRealUid(Env* env, const std::string& proc_root, int pid) {
  auto text = env->ReadFile(proc_root + "/" + std::to_string(pid) + "/status", kMaxStatusHeadBytes);
  return text.ok() ? ParseRealUid(*text) : kUnknownUid;
}

std::optional<std::string> SystemUserName(uint32_t uid) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 4096);
  while (true) {
    struct passwd pw {};
    struct passwd* found = nullptr;
    int err = ::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found);
    if (err == ERANGE && buf.size() < kMaxPasswdBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (err != 0 || found == nullptr || pw.pw_name == nullptr || pw.pw_name[0] == '\0') {
      return std::nullopt;
    }
    return std::string(CutUtf8(pw.pw_name, kMaxUserNameBytes));
  }
}

UserNames::UserNames(UserNamesOptions options)
    : options_(std::move(options)), env_(options_.env ? options_.env : Env::Default()) {
  if (!options_.lookup) options_.lookup = SystemUserName;
}

UserNames* UserNames::Default() {
  static UserNames* names = new UserNames();
  return names;
}

size_t UserNames::lookups() const {
  std::lock_guard lock(mu_);
  return lookups_;
}

// Under mu_: a slow NSS answer holds up other callers, but there is one in
// practice (the tracker's pass), and it asks each uid once per ttl.
std::string UserNames::Lookup(uint32_t uid) {
  ++lookups_;
  std::optional<std::string> name = options_.lookup(uid);
  return name && !name->empty() ? *name : std::to_string(uid);
}

std::string UserNames::NameOf(int64_t uid) {
  if (uid < 0 || uid > kMaxUid) return "";
  const auto key = static_cast<uint32_t>(uid);
  const int64_t now = env_->MonotonicMillis();
  std::lock_guard lock(mu_);
  auto it = by_uid_.find(key);
  if (it != by_uid_.end() && now - it->second.at_ms < options_.ttl_ms) return it->second.name;
  if (it == by_uid_.end() && by_uid_.size() >= options_.max_entries) {
    // Bounded: the stale go first, else all (a node with more users than
    // this among its jobs asks the database again, nothing worse).
    std::erase_if(by_uid_, [&](const auto& e) { return now - e.second.at_ms >= options_.ttl_ms; });
    if (by_uid_.size() >= options_.max_entries) by_uid_.clear();
  }
  Entry& e = by_uid_[key];
  e.name = Lookup(key);
  e.at_ms = now;
  return e.name;
}

}  // namespace vigil::discover
