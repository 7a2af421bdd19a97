// `vigil inspect-log FILE|-`: prints what Vigil extracts from a training log,
// one JSON object per line, in line order: metric values
// ({"line": 12, "metric": "loss", "value": 1.234, "step": 100}) and events
// ({"line": 40, "event": "cuda_oom", ...}). It answers "why is my loss not
// showing?": if a value is not printed here, the agent does not see it either.
//
// The file is streamed in 64 KiB reads, so a log of any size runs in bounded
// memory; "-" reads standard input.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "collect/training/inspector.h"

namespace vigil::cli {
namespace {

constexpr size_t kReadBytes = 64 * 1024;

// Feeds the whole of `fd` to the inspector; the error of a failed read.
Status Stream(int fd, const std::string& name, collect::training::Inspector* inspector) {
  std::string buf(kReadBytes, '\0');
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", name, errno);
    }
    if (n == 0) break;
    inspector->Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  inspector->Finish();
  return Status::Ok();
}

}  // namespace

int RunInspectLog(const InspectLogFlags& flags) {
  const bool stdin_input = flags.path == "-";
  int fd = stdin_input ? STDIN_FILENO : ::open(flags.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Status st = ErrnoStatus("cannot open", flags.path, errno);
    std::fprintf(stderr, "vigil inspect-log: %s\n", st.message().c_str());
    return 1;
  }
  collect::training::Inspector inspector([](std::string_view json) {
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fputc('\n', stdout);
  });
  Status st = Stream(fd, stdin_input ? "standard input" : flags.path, &inspector);
  if (!stdin_input) ::close(fd);
  if (std::fflush(stdout) != 0 && st.ok())
    st = ErrnoStatus("cannot write", "standard output", errno);
  if (!st.ok()) {
    std::fprintf(stderr, "vigil inspect-log: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace vigil::cli
