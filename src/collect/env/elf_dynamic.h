// ReadElfDynamic: the few dynamic-section entries that decide which shared
// libraries a file makes the loader look for, and where: DT_SONAME,
// DT_NEEDED, DT_RPATH and DT_RUNPATH.
//
// Input is untrusted (any file under a --root tree can be named libfoo.so):
// every offset and size is checked against the bytes given before it is
// used, counts are bounded, and a bad file is a Corruption status that says
// what was wrong, never a crash. The file is read in small ranges (the
// dynamic section of a 1 GB libtorch_cuda.so sits near its end), each bounded,
// so a huge or hostile file costs at most a few MiB of reads.
//
// ELF32 and ELF64, little- and big-endian.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil::collect {

struct ElfDynamic {
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> rpath;    // DT_RPATH split at ':', "$ORIGIN" kept
  std::vector<std::string> runpath;  // DT_RUNPATH split at ':'
};

// Reads up to `len` bytes at `offset` (fewer at the end of the file).
using ReadRangeFn = std::function<Result<std::string>(uint64_t offset, size_t len)>;

// InvalidArgument: not an ELF file. Corruption: an ELF file whose headers or
// dynamic section do not hold together or lie beyond `file_size`. An error
// from `read` is returned as it is.
Result<ElfDynamic> ReadElfDynamic(const ReadRangeFn& read, uint64_t file_size);
// The same over a whole file in memory (tests, fuzzing).
Result<ElfDynamic> ReadElfDynamic(std::string_view bytes);

// Whether `bytes` start with the ELF magic.
bool LooksLikeElf(std::string_view bytes);

}  // namespace vigil::collect
