// RootedFs: the machine's files as `vigil env lock` sees them, either the live
// machine (root "/") or a copy of one under a directory (--root DIR).
//
// Every path is resolved component by component, following symlinks by hand:
// an absolute link target restarts at the root and ".." never climbs above
// it, so a link /usr/lib -> /etc in DIR reads DIR/etc, never the host's /etc.
// The kernel's own resolution cannot be used for that (it would follow an
// absolute link out of DIR). Resolution is bounded (kMaxLinkHops), so a link
// loop ends with an error instead of hanging.
//
// File contents and directory listings go through the injectable core Env;
// links are read with lstat/readlink, which core Env does not offer.
//
// Thread safety: const methods may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil::collect {

class RootedFs {
 public:
  static constexpr int kMaxLinkHops = 40;  // as the kernel's MAXSYMLINKS

  // `root` "/" or "" reads the live machine. `env` must outlive this object.
  RootedFs(Env* env, std::string root);

  // The path inside the root (absolute, normalised, symlinks followed) that
  // `path` leads to. A missing final component is fine (its name is kept); a
  // missing directory on the way, or too many links, is NotFound.
  Result<std::string> Resolve(const std::string& path) const;

  // Where `inside` lives on the host: root + inside. No resolution.
  std::string HostPath(const std::string& inside) const;

  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) const;
  // Sorted names; NotFound when `path` is not a directory.
  Result<std::vector<std::string>> ListDir(const std::string& path) const;
  bool IsDir(const std::string& path) const;
  bool IsFile(const std::string& path) const;
  bool Exists(const std::string& path) const;
  // Whether `path`'s last component itself is a symlink (not followed).
  bool IsLink(const std::string& path) const;
  Result<uint64_t> FileSize(const std::string& path) const;
  // Up to `len` bytes at `offset` of a file (pread: core Env reads files only
  // from their start, and the ELF reader needs ranges of huge libraries).
  Result<std::string> ReadRange(const std::string& path, uint64_t offset, size_t len) const;

  bool live() const { return root_.empty(); }

 private:
  Env* env_;
  std::string root_;  // "" for the live machine, else without a trailing '/'
};

// "/a/b/../c" -> "/a/c"; never above "/".
std::string NormalizePath(const std::string& path);
// The directory part of an absolute path: "/a/b" -> "/a"; "/a" -> "/".
std::string DirName(const std::string& path);
std::string BaseName(const std::string& path);

}  // namespace vigil::collect
