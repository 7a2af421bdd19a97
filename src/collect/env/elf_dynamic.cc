#include "collect/env/elf_dynamic.h"

#include <algorithm>
#include <cstdint>

namespace vigil::collect {
namespace {

constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtDynamic = 2;
constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14,
                  kDtRpath = 15, kDtRunpath = 29;
// Real libraries have about ten program headers and at most a few hundred
// dynamic entries; the bounds only keep a hostile file from costing time.
constexpr uint64_t kMaxPhdrs = 1024;
constexpr uint64_t kMaxDynEntries = 1 << 14;
constexpr uint64_t kMaxStrings = 256;
constexpr size_t kMaxString = 4096;  // PATH_MAX

uint64_t Get(std::string_view b, uint64_t off, int width, bool big) {  // caller checked bounds
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    v = (v << 8) | static_cast<unsigned char>(b[off + (big ? i : width - 1 - i)]);
  }
  return v;
}

struct Load {
  uint64_t vaddr, offset, filesz;
};

Status Bad(const std::string& what) { return Corruption("bad ELF file: " + what); }

std::vector<std::string> SplitPath(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t colon = s.find(':', start);
    if (colon == std::string_view::npos) colon = s.size();
    // An empty element means the current directory to glibc; kept as ".".
    out.emplace_back(colon == start ? std::string(".")
                                    : std::string(s.substr(start, colon - start)));
    start = colon + 1;
  }
  return out;
}

// Reads exactly `len` bytes at `off`, which the caller checked lie in the file.
Result<std::string> ReadExact(const ReadRangeFn& read, uint64_t off, uint64_t len,
                              const char* what) {
  VIGIL_ASSIGN_OR_RETURN(std::string got, read(off, static_cast<size_t>(len)));
  if (got.size() < len) return Bad(std::string(what) + " truncated");
  got.resize(static_cast<size_t>(len));
  return got;
}

bool InFile(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

}  // namespace

bool LooksLikeElf(std::string_view bytes) {
  return bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view(
                                                        "\x7f"
                                                        "ELF",
                                                        4);
}

Result<ElfDynamic> ReadElfDynamic(const ReadRangeFn& read, uint64_t size) {
  VIGIL_ASSIGN_OR_RETURN(std::string head, read(0, 64));
  if (!LooksLikeElf(head)) return InvalidArgument("not an ELF file (no \\x7fELF magic)");
  if (head.size() < 16) return Bad("truncated identification");
  const int cls = static_cast<unsigned char>(head[4]);
  const int data = static_cast<unsigned char>(head[5]);
  if (cls != 1 && cls != 2) return Bad("unknown class " + std::to_string(cls));
  if (data != 1 && data != 2) return Bad("unknown byte order " + std::to_string(data));
  const bool is64 = cls == 2;
  const bool big = data == 2;
  const int word = is64 ? 8 : 4;
  if (head.size() < (is64 ? 64u : 52u)) return Bad("truncated header");
  const uint64_t phoff = Get(head, is64 ? 32 : 28, word, big);
  const uint64_t phentsize = Get(head, is64 ? 54 : 42, 2, big);
  const uint64_t phnum = Get(head, is64 ? 56 : 44, 2, big);
  if (phnum == 0) return Bad("no program headers (not a linked file)");
  if (phnum > kMaxPhdrs) return Bad("too many program headers");
  if (phentsize < (is64 ? 56u : 32u)) return Bad("program header entries too small");
  if (!InFile(phoff, phnum * phentsize, size)) return Bad("program headers beyond the end");
  VIGIL_ASSIGN_OR_RETURN(std::string ph,
                         ReadExact(read, phoff, phnum * phentsize, "program headers"));

  std::vector<Load> loads;
  bool have_dynamic = false;
  uint64_t dyn_off = 0, dyn_size = 0;
  for (uint64_t i = 0; i < phnum; ++i) {
    const uint64_t p = i * phentsize;
    const uint64_t type = Get(ph, p, 4, big);
    // The layouts differ: ELF64 puts p_flags second.
    const uint64_t offset = Get(ph, p + (is64 ? 8 : 4), word, big);
    const uint64_t vaddr = Get(ph, p + (is64 ? 16 : 8), word, big);
    const uint64_t filesz = Get(ph, p + (is64 ? 32 : 16), word, big);
    if (type == kPtLoad) loads.push_back({vaddr, offset, filesz});
    if (type == kPtDynamic && !have_dynamic) {
      have_dynamic = true;
      dyn_off = offset;
      dyn_size = filesz;
    }
  }
  ElfDynamic out;
  if (!have_dynamic) return out;  // statically linked: needs nothing
  const uint64_t entsize = 2 * static_cast<uint64_t>(word);
  if (!InFile(dyn_off, dyn_size, size)) return Bad("dynamic section beyond the end");
  const uint64_t count = dyn_size / entsize;
  if (count > kMaxDynEntries) return Bad("dynamic section too large");
  VIGIL_ASSIGN_OR_RETURN(std::string dyn,
                         ReadExact(read, dyn_off, count * entsize, "dynamic section"));

  uint64_t strtab_addr = 0, strsz = 0;
  bool have_strtab = false;
  std::vector<std::pair<int64_t, uint64_t>> strings;  // (tag, offset in the string table)
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t tag = static_cast<int64_t>(Get(dyn, i * entsize, word, big));
    const uint64_t val = Get(dyn, i * entsize + word, word, big);
    if (tag == kDtNull) break;
    if (tag == kDtStrtab) {
      strtab_addr = val;
      have_strtab = true;
    } else if (tag == kDtStrsz) {
      strsz = val;
    } else if (tag == kDtNeeded || tag == kDtSoname || tag == kDtRpath || tag == kDtRunpath) {
      if (strings.size() >= kMaxStrings) return Bad("too many DT_NEEDED entries");
      strings.emplace_back(tag, val);
    }
  }
  if (strings.empty()) return out;
  if (!have_strtab) return Bad("dynamic section names strings but has no DT_STRTAB");
  // DT_STRTAB is an address: the PT_LOAD segment holding it gives its offset.
  bool mapped = false;
  uint64_t str_off = 0;
  for (const Load& l : loads) {
    if (strtab_addr >= l.vaddr && strtab_addr - l.vaddr < l.filesz) {
      str_off = l.offset + (strtab_addr - l.vaddr);
      mapped = true;
      break;
    }
  }
  if (!mapped) return Bad("DT_STRTAB address is in no loaded segment");
  if (str_off >= size) return Bad("string table beyond the end");
  uint64_t table_len = size - str_off;
  if (strsz != 0 && strsz < table_len) table_len = strsz;

  for (const auto& [tag, off] : strings) {
    if (off >= table_len) return Bad("string offset beyond the string table");
    const uint64_t avail = std::min<uint64_t>(table_len - off, kMaxString + 1);
    VIGIL_ASSIGN_OR_RETURN(std::string chunk,
                           ReadExact(read, str_off + off, avail, "string table"));
    size_t end = chunk.find('\0');
    if (end == std::string::npos) {
      return Bad(avail > kMaxString ? "string longer than 4 KiB"
                                    : "unterminated string in the string table");
    }
    chunk.resize(end);
    if (tag == kDtNeeded) out.needed.push_back(std::move(chunk));
    if (tag == kDtSoname) out.soname = std::move(chunk);
    if (tag == kDtRpath) out.rpath = SplitPath(chunk);
    if (tag == kDtRunpath) out.runpath = SplitPath(chunk);
  }
  return out;
}

Result<ElfDynamic> ReadElfDynamic(std::string_view bytes) {
  auto read = [bytes](uint64_t off, size_t len) -> Result<std::string> {
    if (off >= bytes.size()) return std::string();
    return std::string(bytes.substr(static_cast<size_t>(off), len));
  };
  return ReadElfDynamic(read, bytes.size());
}

}  // namespace vigil::collect
