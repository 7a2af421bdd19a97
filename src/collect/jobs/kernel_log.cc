#include "collect/jobs/kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/strings.h"

namespace vigil::collect::jobs {
bool ParseKmsgRecord(std::string_view record, uint64_t* usec, std::string_view* text) {
  size_t semi = record.find(';');
  if (semi == std::string_view::npos) return false;
  std::vector<std::string_view> fields = Split(record.substr(0, semi), ',');
  if (fields.size() < 4) return false;
  auto ts = ParseUint64(fields[2]);
  if (!ts) return false;
  *usec = *ts;
  *text = record.substr(semi + 1);
  return true;
}

KernelLog::KernelLog(std::string path, Env* env)
    : path_(std::move(path)), env_(env ? env : Env::Default()) {}

KernelLog::~KernelLog() {
  if (fd_ >= 0) ::close(fd_);
}

void KernelLog::OnRecord(std::string_view record, int64_t boot_ms, std::vector<KernelEvent>* out) {
  uint64_t usec;
  std::string_view text;
  if (!ParseKmsgRecord(record, &usec, &text)) return;
  for (parse::training::Event& ev : detector_.Detect(text, 1)) {
    KernelEvent k;
    k.time_ms = boot_ms + static_cast<int64_t>(usec / 1000);
    if (const auto* pid = ev.Find("pid"))
      k.pid = static_cast<int>(ParseInt64(pid->value).value_or(0));
    k.event = std::move(ev);
    out->push_back(std::move(k));
  }
}

Status KernelLog::Poll(std::vector<KernelEvent>* out) {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return ErrnoStatus("cannot read the kernel log", path_, errno);
  }
  // Wall-clock ms at boot: kmsg times are since boot (the monotonic clock).
  const int64_t boot_ms = env_->NowMillis() - env_->MonotonicMillis();
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // records overwritten before we read them: go on
      if (errno == EAGAIN) return Status::Ok();
      return ErrnoStatus("cannot read the kernel log", path_, errno);
    }
    if (n == 0) return Status::Ok();  // a regular file's end
    // /dev/kmsg: one record per read; a file: any split. Lines starting
    // with a space continue a record (its key=value dictionary): skipped.
    partial_.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line = std::string_view(partial_).substr(start, nl - start);
      if (!line.empty() && line.front() != ' ') OnRecord(line, boot_ms, out);
    }
    partial_.erase(0, start);
    if (partial_.size() > 65536) partial_.clear();
  }
}

}  // namespace vigil::collect::jobs
