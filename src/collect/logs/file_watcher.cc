#include "collect/logs/file_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace vigil::collect::logs {
namespace {

constexpr uint32_t kDirEvents = IN_MODIFY | IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE |
                                IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF |
                                IN_ONLYDIR;

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// More marked files than this and the caller may as well read everything.
constexpr size_t kMaxMarkedFiles = 4096;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<std::unique_ptr<FileWatcher>> FileWatcher::Create(FileWatcherOptions options) {
  if (options.poll_interval_ms <= 0) options.poll_interval_ms = 250;
  std::unique_ptr<FileWatcher> w(new FileWatcher(options));
  w->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (w->wake_fd_ < 0) return ErrnoStatus("eventfd", "file watcher", errno);
  if (!options.force_polling) {
    // Failure (EMFILE: the per-user instance limit) leaves us polling.
    w->inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  }
  return w;
}

FileWatcher::~FileWatcher() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status FileWatcher::Watch(const std::string& file_path) {
  if (file_path.empty()) return InvalidArgument("file watcher needs a path");
  Dir& d = dirs_[DirOf(file_path)];
  ++d.refs;
  ++d.files[BaseOf(file_path)];
  changes_.files.insert(file_path);
  TryAddWatches();
  return Status::Ok();
}

void FileWatcher::Unwatch(const std::string& file_path) {
  auto it = dirs_.find(DirOf(file_path));
  if (it == dirs_.end()) return;
  auto f = it->second.files.find(BaseOf(file_path));
  if (f != it->second.files.end() && --f->second == 0) it->second.files.erase(f);
  if (--it->second.refs > 0) return;
  if (it->second.wd >= 0) {
    ::inotify_rm_watch(inotify_fd_, it->second.wd);
    by_wd_.erase(it->second.wd);
  }
  dirs_.erase(it);
}

void FileWatcher::TryAddWatches() {
  if (inotify_fd_ < 0) return;
  for (auto& [dir, d] : dirs_) {
    if (d.wd >= 0) continue;
    // ENOENT (not there yet) and ENOSPC (max_user_watches) leave it polled.
    int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kDirEvents);
    if (wd < 0) continue;
    d.wd = wd;
    by_wd_[wd] = dir;
  }
}

bool FileWatcher::polling() const {
  if (inotify_fd_ < 0) return !dirs_.empty() || options_.force_polling;
  return std::any_of(dirs_.begin(), dirs_.end(), [](const auto& e) { return e.second.wd < 0; });
}

bool FileWatcher::DrainEvents() {
  alignas(struct inotify_event) char buf[16 * 1024];
  bool any = false;
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buf, sizeof(buf));
    if (n <= 0) break;  // EAGAIN: drained
    any = true;
    for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      if (ev->mask & IN_Q_OVERFLOW) changes_.all = true;
      if (ev->len > 0) NoteEvent(ev->wd, std::string_view(ev->name, strnlen(ev->name, ev->len)));
      // The directory went away (or was moved): its watch is dead; poll it
      // until it can be watched again.
      if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
        auto it = by_wd_.find(ev->wd);
        if (it != by_wd_.end()) {
          auto d = dirs_.find(it->second);
          if (d != dirs_.end()) d->second.wd = -1;
          if (!(ev->mask & IN_IGNORED)) ::inotify_rm_watch(inotify_fd_, ev->wd);
          by_wd_.erase(it);
        }
      }
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  return any;
}

void FileWatcher::NoteEvent(int wd, std::string_view name) {
  auto it = by_wd_.find(wd);
  if (it == by_wd_.end()) return;
  const std::string& dir = it->second;
  auto d = dirs_.find(dir);
  if (d == dirs_.end()) return;
  std::string base(name);
  if (!d->second.files.count(base)) {
    changes_.dirs.insert(dir);
  } else if (changes_.files.size() < kMaxMarkedFiles) {
    changes_.files.insert(dir == "/" ? "/" + base : dir + "/" + base);
  } else {
    changes_.all = true;
  }
}

FileChanges FileWatcher::TakeChanges() {
  if (inotify_fd_ >= 0) DrainEvents();
  FileChanges out = std::move(changes_);
  changes_ = FileChanges();
  for (const auto& [dir, d] : dirs_) {
    if (d.wd < 0) out.dirs.insert(dir);  // polled: no events to go by
  }
  return out;
}

bool FileChanges::MayHaveChanged(const std::string& file_path) const {
  return all || files.count(file_path) || dirs.count(DirOf(file_path));
}

void FileWatcher::Sleep(int64_t timeout_ms) {
  // Only Wake() ends it: inotify's events wait in the kernel's queue until
  // TakeChanges() drains them, so twenty writers do not wake us twenty times.
  int64_t deadline = NowMs() + std::max<int64_t>(timeout_ms, 0);
  for (int64_t now = NowMs(); now < deadline; now = NowMs()) {
    struct pollfd fd = {wake_fd_, POLLIN, 0};
    int r = ::poll(&fd, 1, static_cast<int>(deadline - now));
    if (r < 0 && errno != EINTR) return;
    if (r > 0 && (fd.revents & POLLIN)) {
      uint64_t v;
      (void)!::read(wake_fd_, &v, sizeof(v));
      return;
    }
  }
}

bool FileWatcher::Wait(int64_t timeout_ms) {
  TryAddWatches();
  int64_t deadline = NowMs() + std::max<int64_t>(timeout_ms, 0);
  bool poll_mode = polling();
  int64_t poll_deadline = NowMs() + options_.poll_interval_ms;
  for (;;) {
    int64_t now = NowMs();
    int64_t until = poll_mode ? std::min(deadline, poll_deadline) : deadline;
    int wait = static_cast<int>(std::clamp<int64_t>(until - now, 0, 1 << 30));
    struct pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    int nfds = inotify_fd_ >= 0 ? 2 : 1;
    int r = ::poll(fds, static_cast<nfds_t>(nfds), wait);
    if (r < 0 && errno != EINTR) return true;  // cannot wait: let the caller read
    if (r > 0) {
      bool woke = false;
      if (fds[0].revents & POLLIN) {
        uint64_t v;
        if (::read(wake_fd_, &v, sizeof(v)) < 0) {
          // EAGAIN: another reader took it; still a wake-up.
        }
        woke = true;
      }
      if (nfds == 2 && (fds[1].revents & POLLIN) && DrainEvents()) woke = true;
      if (woke) return true;
    }
    now = NowMs();
    if (poll_mode && now >= poll_deadline) return true;
    if (now >= deadline) return false;
  }
}

void FileWatcher::Wake() {
  uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof(one)) < 0) {
    // EAGAIN: the counter is saturated, so a wake-up is already pending.
  }
}

}  // namespace vigil::collect::logs
