#include "collect/logs/tailer_siblings.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "discover/log_sources.h"

#ifdef VIGIL_HAVE_ZLIB
#include <zlib.h>
#endif

namespace vigil::collect::logs {

namespace {

// "1", "20261201", "2026-12-01", "20261201-120000", "2026-12-01T12:00:00Z":
// what rotators append (the same rule discovery uses for "app.log.1").
bool IsRotationSuffix(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == ':' || c == 'T' || c == 'Z';
  });
}

// A separator and a rotation suffix: ".1", "-20261201", "_2026-12-01".
bool IsSeparatedSuffix(std::string_view s) {
  return s.size() >= 2 && (s[0] == '.' || s[0] == '-' || s[0] == '_') &&
         IsRotationSuffix(s.substr(1));
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string_view BaseOf(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool IsRotatedSiblingName(std::string_view live, std::string_view name) {
  if (live.empty() || name == live) return false;
  if (discover::IsRotatedCompressed(name)) {
    size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    name = name.substr(0, dot);
  }
  if (name.size() > live.size() && name.starts_with(live) &&
      IsSeparatedSuffix(name.substr(live.size()))) {
    return true;
  }
  // The extension kept last: "app-20261201.log" for "app.log".
  size_t dot = live.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  std::string_view stem = live.substr(0, dot), ext = live.substr(dot);
  if (name.size() <= live.size() || !name.starts_with(stem) || !name.ends_with(ext)) return false;
  return IsSeparatedSuffix(name.substr(stem.size(), name.size() - stem.size() - ext.size()));
}

std::vector<RotatedSibling> ListRotatedSiblings(Env* env, const std::string& path, size_t max_scan,
                                                size_t max_keep) {
  std::vector<RotatedSibling> out;
  std::string dir = DirOf(path);
  std::string_view live = BaseOf(path);
  auto names = env->ListDir(dir);
  if (!names.ok()) return out;
  size_t scanned = 0;
  for (const std::string& n : *names) {
    if (++scanned > max_scan) break;
    if (!IsRotatedSiblingName(live, n)) continue;
    RotatedSibling s;
    s.path = JoinPath(dir, n);
    struct stat st {};
    // lstat: a symlink could lead out of the directory; siblings are files here.
    if (::lstat(s.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    s.dev = static_cast<uint64_t>(st.st_dev);
    s.ino = static_cast<uint64_t>(st.st_ino);
    s.size = static_cast<uint64_t>(st.st_size);
    s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    s.compressed = discover::IsRotatedCompressed(n);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const RotatedSibling& a, const RotatedSibling& b) {
    return a.mtime_ns != b.mtime_ns ? a.mtime_ns > b.mtime_ns : a.path < b.path;
  });
  if (out.size() > max_keep) out.resize(max_keep);
  return out;
}

#ifdef VIGIL_HAVE_ZLIB

bool CanInflateGzip() { return true; }

namespace {

// Where the inflated bytes go: the head, the check window and, from `from`
// on, the memory file.
struct InflateSink {
  InflatedCopy* out;
  size_t head_len;
  uint64_t window_begin, window_end, from;

  Status Put(uint64_t pos, std::string_view bytes) {
    uint64_t end = pos + bytes.size();
    if (pos < head_len) {
      out->head.append(
          bytes.substr(0, static_cast<size_t>(std::min<uint64_t>(end, head_len) - pos)));
    }
    if (end > window_begin && pos < window_end) {
      uint64_t b = std::max(pos, window_begin), e = std::min(end, window_end);
      out->window.append(bytes.substr(static_cast<size_t>(b - pos), static_cast<size_t>(e - b)));
    }
    if (end <= from) return Status::Ok();
    uint64_t b = std::max(pos, from);
    std::string_view w = bytes.substr(static_cast<size_t>(b - pos));
    while (!w.empty()) {
      ssize_t n =
          NoEintr([&] { return ::pwrite(out->fd, w.data(), w.size(), static_cast<off_t>(b)); });
      if (n <= 0) return ErrnoStatus("write", "inflated copy", errno);
      w.remove_prefix(static_cast<size_t>(n));
      b += static_cast<uint64_t>(n);
    }
    return Status::Ok();
  }
};

}  // namespace

Result<InflatedCopy> InflateGzipCopy(const std::string& path, size_t head_len, uint64_t window_end,
                                     size_t window_len, uint64_t from, uint64_t max_total) {
  int in = NoEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); });
  if (in < 0) return ErrnoStatus("open", path, errno);
  InflatedCopy out;
  out.fd = ::memfd_create("vigil-inflated-copy", MFD_CLOEXEC);
  if (out.fd < 0) {
    int err = errno;
    ::close(in);
    return ErrnoStatus("memfd_create", path, err);
  }
  uint64_t window_begin = window_end - std::min<uint64_t>(window_end, window_len);
  InflateSink sink{&out, head_len, window_begin, window_end, from};
  z_stream zs{};
  // 15 + 32: a zlib or gzip header, detected.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    ::close(in);
    ::close(out.fd);
    return IoError("zlib: inflateInit2 failed");
  }
  std::string ibuf(64u << 10, '\0'), obuf(64u << 10, '\0');
  Status st = Status::Ok();
  // Complete only when the input ends right after a member's end (gzip's
  // "trailing garbage" after one is ignored, as gzip -d does).
  bool at_member_end = false;
  while (st.ok() && out.size < max_total) {
    if (zs.avail_in == 0) {
      ssize_t n = NoEintr([&] { return ::read(in, ibuf.data(), ibuf.size()); });
      if (n < 0) st = ErrnoStatus("read", path, errno);
      if (n <= 0) break;  // cut short, or still being compressed, unless at_member_end
      zs.next_in = reinterpret_cast<Bytef*>(ibuf.data());
      zs.avail_in = static_cast<uInt>(n);
    }
    uint64_t room = std::min<uint64_t>(obuf.size(), max_total - out.size);
    zs.next_out = reinterpret_cast<Bytef*>(obuf.data());
    zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t got = static_cast<size_t>(room - zs.avail_out);
    if (got > 0) st = sink.Put(out.size, std::string_view(obuf.data(), got));
    out.size += got;
    if (rc == Z_STREAM_END) {
      at_member_end = true;
      inflateReset(&zs);  // another member may follow
    } else if (rc == Z_OK || (rc == Z_BUF_ERROR && got > 0)) {
      at_member_end = at_member_end && got == 0 && zs.total_in == 0;
    } else {
      break;  // corrupt: the copy ends where it went bad
    }
  }
  out.complete = st.ok() && at_member_end && out.size < max_total;
  inflateEnd(&zs);
  ::close(in);
  if (st.ok() && ::ftruncate(out.fd, static_cast<off_t>(out.size)) != 0) {
    st = ErrnoStatus("truncate", "inflated copy", errno);
  }
  if (!st.ok()) {
    ::close(out.fd);
    return st;
  }
  return out;
}

#else  // !VIGIL_HAVE_ZLIB

bool CanInflateGzip() { return false; }

Result<InflatedCopy> InflateGzipCopy(const std::string& path, size_t, uint64_t, size_t, uint64_t,
                                     uint64_t) {
  return Unimplemented("this build has no zlib: cannot read " + path);
}

#endif

}  // namespace vigil::collect::logs
