#include "discover/proc_events.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "core/strings.h"

namespace vigil::discover {
namespace {

template <typename T>
T Load(std::string_view bytes, size_t offset) {
  T v{};
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

// The union's structs have no name C++ can reach but through decltype.
using ExecEvent = decltype(proc_event::event_data.exec);
using ExitEvent = decltype(proc_event::event_data.exit);

// The proc_event in one cn_msg payload, when it is an exec or exit of a
// process (not a thread).
std::optional<ProcEvent> DecodeOne(std::string_view ev) {
  constexpr size_t kData = offsetof(struct proc_event, event_data);
  if (ev.size() < kData) return std::nullopt;
  uint32_t what = Load<uint32_t>(ev, offsetof(struct proc_event, what));
  ProcEvent out;
  out.time_ns = static_cast<int64_t>(Load<uint64_t>(ev, offsetof(struct proc_event, timestamp_ns)));
  if (what == proc_event::PROC_EVENT_EXEC) {
    if (ev.size() < kData + sizeof(ExecEvent)) return std::nullopt;
    auto e = Load<ExecEvent>(ev, kData);
    // An exec by a thread makes it the leader: the process is the tgid.
    out.kind = ProcEvent::Kind::kExec;
    out.pid = e.process_tgid;
  } else if (what == proc_event::PROC_EVENT_EXIT) {
    if (ev.size() < kData + sizeof(ExitEvent)) return std::nullopt;
    auto e = Load<ExitEvent>(ev, kData);
    if (e.process_pid != e.process_tgid) return std::nullopt;  // a thread, not the process
    out.kind = ProcEvent::Kind::kExit;
    out.pid = e.process_pid;
    int status = static_cast<int>(e.exit_code);
    if ((status & 0x7f) == 0) {
      out.exit_code = (status >> 8) & 0xff;
    } else {
      out.exit_signal = status & 0x7f;
    }
  } else {
    return std::nullopt;
  }
  if (out.pid <= 0) return std::nullopt;
  return out;
}

class Connector final : public ProcEventSource {
 public:
  explicit Connector(int fd) : fd_(fd) {}
  ~Connector() override {
    (void)Subscribe(PROC_CN_MCAST_IGNORE);
    ::close(fd_);
  }

  Status Subscribe(int op) {
    // nlmsghdr, cn_msg (whose data[] is the op), the op: laid out by hand,
    // since cn_msg ends in a flexible array.
    char msg[sizeof(nlmsghdr) + sizeof(cn_msg) + sizeof(uint32_t)] = {};
    nlmsghdr nl{};
    nl.nlmsg_len = sizeof(msg);
    nl.nlmsg_type = NLMSG_DONE;
    nl.nlmsg_pid = 0;
    cn_msg cn{};
    cn.id.idx = CN_IDX_PROC;
    cn.id.val = CN_VAL_PROC;
    cn.len = sizeof(uint32_t);
    uint32_t value = static_cast<uint32_t>(op);
    std::memcpy(msg, &nl, sizeof(nl));
    std::memcpy(msg + sizeof(nl), &cn, sizeof(cn));
    std::memcpy(msg + sizeof(nl) + sizeof(cn), &value, sizeof(value));
    if (::send(fd_, msg, sizeof(msg), 0) < 0) {
      return ErrnoStatus("subscribing to", "proc events", errno);
    }
    return Status::Ok();
  }

  // The kernel answers a subscription; a refusal (EPERM) comes only there,
  // not from send(). Events that come first are kept for the first Wait.
  Status AwaitAck(int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      int n = ::poll(&p, 1, 100);
      if (n < 0 && errno != EINTR) return ErrnoStatus("poll", "proc events", errno);
      if (n <= 0) continue;
      ssize_t got = ::recv(fd_, buf_, sizeof(buf_), MSG_DONTWAIT);
      if (got <= 0) continue;
      std::string_view bytes(buf_, static_cast<size_t>(got));
      std::vector<ProcEvent> evs = DecodeProcEvents(bytes);
      early_.insert(early_.end(), evs.begin(), evs.end());
      if (auto err = DecodeProcAck(bytes)) {
        if (*err == 0) return Status::Ok();
        if (*err == EPERM || *err == EACCES) {
          return FailedPrecondition("the process events connector refused to listen: " +
                                    std::string(std::strerror(*err)) + " (needs CAP_NET_ADMIN)");
        }
        return Unavailable("the process events connector refused to listen: " +
                           std::string(std::strerror(*err)));
      }
    }
    return Unavailable("the process events connector did not answer");
  }

  Status Wait(int timeout_ms, std::vector<ProcEvent>* out) override {
    out->insert(out->end(), early_.begin(), early_.end());
    early_.clear();
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0) return errno == EINTR ? Status::Ok() : ErrnoStatus("poll", "proc events", errno);
    if (n == 0) return Status::Ok();
    // Drain what is queued, up to a bound, so a fork storm cannot hold us.
    for (int i = 0; i < 1024; ++i) {
      ssize_t got = ::recv(fd_, buf_, sizeof(buf_), MSG_DONTWAIT);
      if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        // The kernel dropped events (we fell behind): go on. The process
        // watcher's ticks still find the exits of what it follows.
        if (errno == ENOBUFS) continue;
        return ErrnoStatus("recv", "proc events", errno);
      }
      if (got == 0) break;
      std::vector<ProcEvent> evs =
          DecodeProcEvents(std::string_view(buf_, static_cast<size_t>(got)));
      out->insert(out->end(), evs.begin(), evs.end());
    }
    return Status::Ok();
  }

  const char* mode() const override { return "connector"; }

 private:
  int fd_;
  std::vector<ProcEvent> early_;  // decoded while awaiting the answer
  alignas(nlmsghdr) char buf_[16384];
};

class Poller final : public ProcEventSource {
 public:
  // The first look is taken here, so that a process started once the
  // poller exists is an exec event (what ran before is the detection pass's).
  Poller(Env* env, std::string root, int interval_ms)
      : env_(env), root_(std::move(root)), interval_ms_(std::max(interval_ms, 10)) {
    if (auto pids = List(); pids.ok()) last_ = std::move(pids).value();
  }

  Status Wait(int timeout_ms, std::vector<ProcEvent>* out) override {
    // The poll's own pace: a fixed interval, whatever the caller asks.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, interval_ms_)));
    auto now = List();
    if (!now.ok()) return now.status();
    for (int pid : *now) {
      if (!last_.contains(pid)) out->push_back({ProcEvent::Kind::kExec, pid, 0, {}, {}});
    }
    for (int pid : last_) {
      if (!now->contains(pid)) out->push_back({ProcEvent::Kind::kExit, pid, 0, {}, {}});
    }
    last_ = std::move(now).value();
    return Status::Ok();
  }

  const char* mode() const override { return "poll"; }

 private:
  Result<std::unordered_set<int>> List() {
    auto names = env_->ListDir(root_);
    if (!names.ok()) return names.status();
    std::unordered_set<int> pids;
    pids.reserve(names->size());
    for (const std::string& name : *names) {
      auto pid = ParseInt64(name);
      if (pid && *pid > 0 && *pid <= INT_MAX && name.front() != '+') {
        pids.insert(static_cast<int>(*pid));
      }
    }
    return pids;
  }

  Env* env_;
  std::string root_;
  int interval_ms_;
  std::unordered_set<int> last_;
};

}  // namespace

namespace {

// Calls fn(payload) for the proc_event of each connector message in a
// datagram, never reading past it.
template <typename Fn>
void ForEachProcPayload(std::string_view bytes, Fn fn) {
  size_t at = 0;
  while (bytes.size() - at >= sizeof(nlmsghdr)) {
    auto nl = Load<nlmsghdr>(bytes, at);
    size_t len = nl.nlmsg_len;
    if (len < sizeof(nlmsghdr) || len > bytes.size() - at) break;  // truncated or junk
    std::string_view msg = bytes.substr(at + sizeof(nlmsghdr), len - sizeof(nlmsghdr));
    if (nl.nlmsg_type != NLMSG_ERROR && nl.nlmsg_type != NLMSG_NOOP &&
        msg.size() >= sizeof(cn_msg)) {
      auto cn = Load<cn_msg>(msg, 0);
      std::string_view payload = msg.substr(sizeof(cn_msg));
      if (cn.id.idx == CN_IDX_PROC && cn.id.val == CN_VAL_PROC && cn.len <= payload.size()) {
        fn(payload.substr(0, cn.len));
      }
    }
    size_t step = NLMSG_ALIGN(len);
    if (step > bytes.size() - at) break;
    at += step;
  }
}

}  // namespace

std::vector<ProcEvent> DecodeProcEvents(std::string_view bytes) {
  std::vector<ProcEvent> out;
  ForEachProcPayload(bytes, [&](std::string_view ev) {
    if (auto e = DecodeOne(ev)) out.push_back(*e);
  });
  return out;
}

std::optional<int> DecodeProcAck(std::string_view bytes) {
  std::optional<int> err;
  ForEachProcPayload(bytes, [&](std::string_view ev) {
    constexpr size_t kData = offsetof(struct proc_event, event_data);
    if (ev.size() < kData + sizeof(uint32_t)) return;
    if (Load<uint32_t>(ev, offsetof(struct proc_event, what)) != proc_event::PROC_EVENT_NONE)
      return;
    uint32_t e = Load<uint32_t>(ev, kData);
    if (e <= 4095) err = static_cast<int>(e);  // an errno, or no answer of ours
  });
  return err;
}

Result<std::unique_ptr<ProcEventSource>> OpenProcConnector() {
  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  if (fd < 0) {
    int err = errno;
    if (err == EPERM || err == EACCES) {
      return FailedPrecondition("the process events connector needs CAP_NET_ADMIN");
    }
    return Unavailable("no process events connector: " + std::string(std::strerror(err)));
  }
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  addr.nl_pid = 0;  // the kernel picks a unique port id
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EPERM || err == EACCES) {
      return FailedPrecondition("the process events connector needs CAP_NET_ADMIN");
    }
    return Unavailable("binding the process events connector: " + std::string(std::strerror(err)));
  }
  // Room for bursts: events are small (76 bytes), a fork storm is not.
  int rcvbuf = 4 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  auto c = std::make_unique<Connector>(fd);
  Status st = c->Subscribe(PROC_CN_MCAST_LISTEN);
  if (!st.ok()) return st;
  VIGIL_RETURN_IF_ERROR(c->AwaitAck(1000));
  return std::unique_ptr<ProcEventSource>(std::move(c));
}

std::unique_ptr<ProcEventSource> NewProcPoller(Env* env, std::string proc_root, int interval_ms) {
  return std::make_unique<Poller>(env, std::move(proc_root), interval_ms);
}

}  // namespace vigil::discover
