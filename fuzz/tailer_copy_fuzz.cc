// Fuzz target: what the tailer reads of a followed file's rotated siblings
// (src/collect/logs/tailer_siblings.h), all of it untrusted: directory entry
// names and the bytes of a gzip copy that may be damaged or still being
// written. Input: a sibling name, '\n', then the copy's bytes.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collect/logs/tailer_siblings.h"

namespace logs = vigil::collect::logs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nl = in.find('\n');
  std::string_view name = in.substr(0, nl);
  std::string_view copy = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  for (std::string_view live : {"app.log", "stdout", "a", ".log"}) {
    if (logs::IsRotatedSiblingName(live, name) && name == live) std::abort();
  }
  if (!logs::CanInflateGzip()) return 0;
  // The copy as a file with no disk behind it.
  int mem = ::memfd_create("fuzz-copy", MFD_CLOEXEC);
  if (mem < 0) return 0;
  if (::write(mem, copy.data(), copy.size()) != static_cast<ssize_t>(copy.size())) {
    ::close(mem);
    return 0;
  }
  constexpr uint64_t kMax = 1 << 20;
  auto c = logs::InflateGzipCopy("/proc/self/fd/" + std::to_string(mem), 16, 64, 16, 32, kMax);
  ::close(mem);
  if (!c.ok()) return 0;
  struct stat st {};
  bool bad = c->size > kMax || c->head.size() != std::min<uint64_t>(c->size, 16) ||
             c->window.size() > 16 || ::fstat(c->fd, &st) != 0 ||
             static_cast<uint64_t>(st.st_size) != c->size;
  ::close(c->fd);
  if (bad) std::abort();
  return 0;
}
