// Fuzz target: the log query parser (untrusted HTTP input) and the checkpoint
// file decoder (a file on disk that may be damaged).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collect/logs/checkpoint.h"
#include "query/logql.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto q = vigil::query::ParseLogQuery(in);
  if (!q.ok() && q.status().code() != vigil::StatusCode::kInvalidArgument) std::abort();
  (void)vigil::query::ParseLogSearch(in);
  auto cps = vigil::collect::logs::DecodeCheckpoints(in);
  if (cps.ok()) {
    // What decodes re-encodes to the same entries.
    auto again =
        vigil::collect::logs::DecodeCheckpoints(vigil::collect::logs::EncodeCheckpoints(*cps));
    if (!again.ok() || *again != *cps) std::abort();
  }
  return 0;
}
