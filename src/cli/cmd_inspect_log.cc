// `vigil inspect-log FILE|-`: prints what Vigil extracts from a training log,
// one JSON object per line, in line order: metric values
// ({"line": 12, "metric": "loss", "value": 1.234, "step": 100}) and events
// ({"line": 40, "event": "cuda_oom", ...}). It answers "why is my loss not
// showing?": if a value is not printed here, the agent does not see it either.
//
// A TensorBoard event file (events.out.tfevents.*, told by its first
// record's header) gives its scalars instead:
// {"record": 3, "metric": "train/loss", "value": 0.5, "step": 100}.
//
// The file is streamed in 64 KiB reads, so a log of any size runs in bounded
// memory; "-" reads standard input.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "parse/training/inspector.h"
#include "parse/training/tfevents.h"

namespace vigil::cli {
namespace {

constexpr size_t kReadBytes = 64 * 1024;

// Reads `fd` in pieces, handing each to `consume`; the error of a failed read.
template <typename Consume>
Status ReadAll(int fd, const std::string& name, std::string first, Consume consume) {
  if (!first.empty()) VIGIL_RETURN_IF_ERROR(consume(first));
  std::string buf(kReadBytes, '\0');
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", name, errno);
    }
    if (n == 0) return Status::Ok();
    VIGIL_RETURN_IF_ERROR(consume(std::string_view(buf.data(), static_cast<size_t>(n))));
  }
}

void PrintLine(std::string_view json) {
  std::fwrite(json.data(), 1, json.size(), stdout);
  std::fputc('\n', stdout);
}

// A TensorBoard event file: its scalars, one object per value, by record.
Status InspectTfEvents(int fd, const std::string& name, std::string first) {
  parse::training::TfEventsReader reader;
  std::vector<parse::training::TfScalar> scalars;
  return ReadAll(fd, name, std::move(first), [&](std::string_view bytes) {
    scalars.clear();
    Status st = reader.Feed(bytes, &scalars);
    for (const auto& s : scalars) {
      parse::training::MetricSample sample{s.tag, s.value, s.step};
      PrintLine(
          parse::training::MetricSampleJson(static_cast<int64_t>(s.record), sample, "record"));
    }
    return st;
  });
}

// The first bytes, enough to tell an event file from a log.
std::string ReadHead(int fd) {
  std::string head(12, '\0');
  size_t got = 0;
  while (got < head.size()) {
    ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  return head;
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
  const std::string name = stdin_input ? "standard input" : flags.path;
  std::string head = ReadHead(fd);
  Status st;
  if (parse::training::LooksLikeTfRecord(head)) {
    st = InspectTfEvents(fd, name, std::move(head));
  } else {
    parse::training::Inspector inspector(PrintLine);
    st = ReadAll(fd, name, std::move(head), [&](std::string_view bytes) {
      inspector.Feed(bytes);
      return Status::Ok();
    });
    inspector.Finish();
  }
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
