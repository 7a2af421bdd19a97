#include "store/logs/wal.h"

#include "store/logs/format.h"

namespace vigil::logstore {

Result<std::unique_ptr<WalWriter>> OpenWalWriter(Env* env, std::string wal_dir, uint64_t segment) {
  return WalWriter::Open(env, std::move(wal_dir), segment, kMaxWalFrameBytes);
}

Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn) {
  ::vigil::WalReplayOptions o;
  o.max_body_bytes = kMaxWalFrameBytes;
  o.max_segment_bytes = size_t{8} << 30;
  // A frame whose checksum holds but whose body does not parse is treated
  // as the end of the valid log, like a torn frame.
  o.body_ok = [](std::string_view body) {
    WalRecord probe;
    return DecodeWalRecord(body, &probe).ok();
  };
  return ::vigil::ReplayWal(env, wal_dir, o, fn);
}

}  // namespace vigil::logstore
