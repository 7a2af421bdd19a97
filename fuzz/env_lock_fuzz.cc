// Fuzz target: the env lock parser (src/env/lock/lock_format.h,
// docs/env-lock.md). Lock files come from other machines and users.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "env/lock/lock_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace env = vigil::env;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto lock = env::ParseLock(in);
  if (!lock.ok()) return 0;
  // Whatever parses writes to a lock that parses to the canonical form of
  // the same lock, and writing that again changes no byte.
  const std::string written = env::WriteLock(*lock);
  auto again = env::ParseLock(written);
  if (!again.ok()) std::abort();
  env::EnvLock canonical = *lock;
  env::Canonicalize(&canonical);
  if (!(*again == canonical)) std::abort();
  if (env::WriteLock(*again) != written) std::abort();
  return 0;
}
