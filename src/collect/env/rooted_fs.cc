#include "collect/env/rooted_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/strings.h"

namespace vigil::collect {
namespace {

// Splits an absolute or relative path into its non-empty components.
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  for (std::string_view c : Split(path, '/')) {
    if (!c.empty() && c != ".") out.emplace_back(c);
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts) {
  if (parts.empty()) return "/";
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out;
}

}  // namespace

std::string NormalizePath(const std::string& path) {
  std::vector<std::string> out;
  for (std::string& c : Components(path)) {
    if (c == "..") {
      if (!out.empty()) out.pop_back();
    } else {
      out.push_back(std::move(c));
    }
  }
  return Join(out);
}

std::string DirName(const std::string& path) {
  std::string n = NormalizePath(path);
  size_t slash = n.rfind('/');
  return slash == 0 ? "/" : n.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  std::string n = NormalizePath(path);
  return n.substr(n.rfind('/') + 1);
}

RootedFs::RootedFs(Env* env, std::string root) : env_(env) {
  while (!root.empty() && root.back() == '/') root.pop_back();
  root_ = std::move(root);
}

std::string RootedFs::HostPath(const std::string& inside) const {
  return root_ + NormalizePath(inside);
}

Result<std::string> RootedFs::Resolve(const std::string& path) const {
  // `todo` holds the components still to walk, last first; a link's target
  // is pushed in front of what remains after it.
  std::vector<std::string> todo = Components(path);
  std::reverse(todo.begin(), todo.end());
  std::vector<std::string> done;
  int hops = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c == "..") {
      if (!done.empty()) done.pop_back();  // clamped: never above the root
      continue;
    }
    done.push_back(c);
    std::string host = root_ + Join(done);
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      if (todo.empty()) return Join(done);  // a missing last component is fine
      return NotFound("no such directory: " + Join(done));
    }
    if (!S_ISLNK(st.st_mode)) continue;
    if (++hops > kMaxLinkHops) {
      return NotFound("too many levels of symbolic links resolving " + path);
    }
    char buf[4096];
    ssize_t n = ::readlink(host.c_str(), buf, sizeof(buf));
    if (n < 0) return ErrnoStatus("readlink", host, errno);
    std::string target(buf, static_cast<size_t>(n));
    done.pop_back();
    if (!target.empty() && target[0] == '/') done.clear();  // absolute: from the root
    std::vector<std::string> more = Components(target);
    for (auto it = more.rbegin(); it != more.rend(); ++it) todo.push_back(*it);
  }
  return Join(done);
}

Result<std::string> RootedFs::ReadFile(const std::string& path, size_t max_bytes) const {
  VIGIL_ASSIGN_OR_RETURN(std::string inside, Resolve(path));
  return env_->ReadFile(root_ + inside, max_bytes);
}

Result<std::vector<std::string>> RootedFs::ListDir(const std::string& path) const {
  VIGIL_ASSIGN_OR_RETURN(std::string inside, Resolve(path));
  if (!IsDir(inside)) return NotFound("not a directory: " + path);
  return env_->ListDir(root_ + inside);
}

bool RootedFs::IsDir(const std::string& path) const {
  auto inside = Resolve(path);
  struct stat st {};
  return inside.ok() && ::lstat((root_ + *inside).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool RootedFs::IsFile(const std::string& path) const {
  auto inside = Resolve(path);
  struct stat st {};
  return inside.ok() && ::lstat((root_ + *inside).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool RootedFs::Exists(const std::string& path) const {
  auto inside = Resolve(path);
  struct stat st {};
  return inside.ok() && ::lstat((root_ + *inside).c_str(), &st) == 0;
}

bool RootedFs::IsLink(const std::string& path) const {
  // Resolve the parent only, so the last component is looked at itself.
  auto parent = Resolve(DirName(path));
  if (!parent.ok()) return false;
  std::string host = root_ + NormalizePath(*parent + "/" + BaseName(path));
  struct stat st {};
  return ::lstat(host.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

Result<uint64_t> RootedFs::FileSize(const std::string& path) const {
  VIGIL_ASSIGN_OR_RETURN(std::string inside, Resolve(path));
  return env_->FileSize(root_ + inside);
}

Result<std::string> RootedFs::ReadRange(const std::string& path, uint64_t offset,
                                        size_t len) const {
  VIGIL_ASSIGN_OR_RETURN(std::string inside, Resolve(path));
  std::string host = root_ + inside;
  int fd = NoEintr([&] { return ::open(host.c_str(), O_RDONLY | O_CLOEXEC); });
  if (fd < 0) return ErrnoStatus("open", host, errno);
  std::string out(len, '\0');
  size_t got = 0;
  while (got < len) {
    ssize_t n = NoEintr(
        [&] { return ::pread(fd, out.data() + got, len - got, static_cast<off_t>(offset + got)); });
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("read", host, err);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace vigil::collect
