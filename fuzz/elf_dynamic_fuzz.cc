// Fuzz target: the ELF dynamic-section reader (src/collect/env/elf_dynamic.h)
// that `vigil env lock` runs on every library file of a machine or a --root
// tree: any file can be named libfoo.so.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collect/env/elf_dynamic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto dyn = vigil::collect::ReadElfDynamic(in);
  if (!dyn.ok()) {
    if (dyn.status().message().empty()) std::abort();  // an error always says why
    return 0;
  }
  // What comes back is bounded by the input and by the reader's limits.
  if (dyn->needed.size() > 256 || dyn->soname.size() > 4096) std::abort();
  for (const auto& n : dyn->needed) {
    if (n.size() > size || n.size() > 4096) std::abort();
  }
  return 0;
}
