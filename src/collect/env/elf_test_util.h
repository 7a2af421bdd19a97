// BuildTestElf: a tiny, valid ELF64 little-endian shared object with only a
// dynamic section (SONAME, NEEDED, RPATH, RUNPATH), for tests and the fixture
// trees under tests/data/env (real libraries are hundreds of MB).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::collect::testing {

struct TestElfSpec {
  std::string soname;
  std::vector<std::string> needed;
  std::string rpath;    // "" = no DT_RPATH
  std::string runpath;  // "" = no DT_RUNPATH
};

inline void PutLe(std::string* out, uint64_t off, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) (*out)[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Layout: ELF header (64) | 2 program headers (PT_LOAD over the whole file,
// PT_DYNAMIC) | dynamic entries | string table. vaddr == file offset.
inline std::string BuildTestElf(const TestElfSpec& spec) {
  std::string strtab(1, '\0');
  auto add = [&](const std::string& s) {
    uint64_t off = strtab.size();
    strtab += s;
    strtab.push_back('\0');
    return off;
  };
  std::vector<std::pair<uint64_t, uint64_t>> dyn;
  for (const std::string& n : spec.needed) dyn.emplace_back(1, add(n));
  if (!spec.soname.empty()) dyn.emplace_back(14, add(spec.soname));
  if (!spec.rpath.empty()) dyn.emplace_back(15, add(spec.rpath));
  if (!spec.runpath.empty()) dyn.emplace_back(29, add(spec.runpath));
  const uint64_t phoff = 64, phnum = 2, dyn_off = phoff + phnum * 56;
  const uint64_t dyn_count = dyn.size() + 3;  // + STRTAB, STRSZ, NULL
  const uint64_t str_off = dyn_off + dyn_count * 16;
  dyn.emplace_back(5, str_off);
  dyn.emplace_back(10, strtab.size());
  dyn.emplace_back(0, 0);
  std::string out(str_off + strtab.size(), '\0');
  out.replace(0, 4,
              "\x7f"
              "ELF");
  out[4] = 2;              // ELFCLASS64
  out[5] = 1;              // little-endian
  out[6] = 1;              // EV_CURRENT
  PutLe(&out, 16, 3, 2);   // ET_DYN
  PutLe(&out, 18, 62, 2);  // EM_X86_64
  PutLe(&out, 20, 1, 4);
  PutLe(&out, 32, phoff, 8);
  PutLe(&out, 52, 64, 2);  // e_ehsize
  PutLe(&out, 54, 56, 2);  // e_phentsize
  PutLe(&out, 56, phnum, 2);
  // PT_LOAD: offset 0, vaddr 0, the whole file.
  PutLe(&out, phoff, 1, 4);
  PutLe(&out, phoff + 32, out.size(), 8);
  PutLe(&out, phoff + 40, out.size(), 8);
  // PT_DYNAMIC.
  const uint64_t p2 = phoff + 56;
  PutLe(&out, p2, 2, 4);
  PutLe(&out, p2 + 8, dyn_off, 8);
  PutLe(&out, p2 + 16, dyn_off, 8);
  PutLe(&out, p2 + 32, dyn_count * 16, 8);
  PutLe(&out, p2 + 40, dyn_count * 16, 8);
  for (size_t i = 0; i < dyn.size(); ++i) {
    PutLe(&out, dyn_off + i * 16, dyn[i].first, 8);
    PutLe(&out, dyn_off + i * 16 + 8, dyn[i].second, 8);
  }
  out.replace(str_off, strtab.size(), strtab);
  return out;
}

}  // namespace vigil::collect::testing
