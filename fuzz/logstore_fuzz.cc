// Fuzz target: the log store's on-disk decoders (WAL records and blocks are
// read back from files that a crash or a disk may have damaged).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "store/logs/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  vigil::logstore::WalRecord rec;
  (void)vigil::logstore::DecodeWalRecord(in, &rec);
  vigil::logstore::DecodedBlock block;
  if (vigil::logstore::DecodeBlock(in, &block).ok()) {
    // A decoded block's offsets must stay inside its text.
    for (size_t i = 0; i < block.size(); ++i) {
      if (block.offsets[i] > block.offsets[i + 1] || block.offsets[i + 1] > block.text.size()) {
        std::abort();
      }
      (void)block.line(i);
    }
  }
  return 0;
}
