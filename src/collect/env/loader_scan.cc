// Which copy of a library a process would load, searched as glibc's ld.so
// does (ld.so(8)): the needing object's DT_RPATH (only when it has no
// DT_RUNPATH) and the executable's, then LD_LIBRARY_PATH, then DT_RUNPATH,
// then the ld.so.cache (approximated by ld.so.conf's directories: the cache is
// built from them), then the default directories. Copies of the same name
// later in the order are "shadowed": present, but not what runs.
#include <set>

#include "collect/env/elf_dynamic.h"
#include "collect/env/scan.h"
#include "core/strings.h"

namespace vigil::collect::scan {
namespace {

struct Elf {
  std::string path;
  ElfDynamic dyn;
};

bool ReadElf(Scan* s, const std::string& path, Elf* out, bool note) {
  auto size = s->fs->FileSize(path);
  if (!size.ok()) return false;
  auto read = [&](uint64_t off, size_t len) { return s->fs->ReadRange(path, off, len); };
  auto dyn = ReadElfDynamic(read, *size);
  if (!dyn.ok()) {
    if (note) s->Note(path, dyn.status());
    return false;
  }
  out->path = path;
  out->dyn = std::move(dyn).value();
  return true;
}

// $ORIGIN is the needing object's directory; $LIB and $PLATFORM as on x86_64.
std::vector<std::string> Expand(const std::vector<std::string>& dirs, const std::string& object) {
  std::vector<std::string> out;
  for (std::string d : dirs) {
    for (const char* origin : {"${ORIGIN}", "$ORIGIN"}) {
      for (size_t at; (at = d.find(origin)) != std::string::npos;) {
        d.replace(at, std::string_view(origin).size(), DirName(object));
      }
    }
    for (size_t at; (at = d.find("$LIB")) != std::string::npos;) d.replace(at, 4, "lib64");
    for (size_t at; (at = d.find("$PLATFORM")) != std::string::npos;) d.replace(at, 9, "x86_64");
    out.push_back(d);
  }
  return out;
}

env::LockResolution Resolve(Scan* s, const std::string& needed, const Elf* object,
                            const Elf* executable) {
  std::vector<std::pair<std::string, std::string>> order;  // (dir, via)
  auto add = [&](const std::vector<std::string>& dirs, const char* via) {
    for (const std::string& d : dirs) order.emplace_back(d, via);
  };
  if (object != nullptr && object->dyn.runpath.empty()) {
    add(Expand(object->dyn.rpath, object->path), "rpath");
    if (executable != nullptr && executable->dyn.runpath.empty()) {
      add(Expand(executable->dyn.rpath, executable->path), "rpath");
    }
  }
  if (auto it = s->job_env.find("LD_LIBRARY_PATH"); it != s->job_env.end()) {
    std::vector<std::string> dirs;
    for (std::string_view d : Split(it->second, ':')) dirs.emplace_back(d.empty() ? "." : d);
    add(dirs, "LD_LIBRARY_PATH");
  }
  if (object != nullptr) add(Expand(object->dyn.runpath, object->path), "runpath");
  add(s->ld_conf_dirs, "ld.so.conf");
  add(s->default_dirs, "default");

  env::LockResolution r;
  r.consumer = object != nullptr ? object->path : "";
  r.needed = needed;
  std::set<std::string> seen;
  for (const auto& [dir, via] : order) {
    if (dir.empty() || dir[0] != '/') continue;  // relative: depends on the cwd, not locked
    auto real = s->fs->Resolve(dir + "/" + needed);
    if (!real.ok() || !s->fs->IsFile(*real) || !seen.insert(*real).second) continue;
    if (r.resolved.empty()) {
      r.resolved = *real;
      r.via = via;
    } else {
      r.shadowed.push_back(*real);
    }
  }
  return r;
}

}  // namespace

void ScanLoads(Scan* s) {
  // Per Python env: what torch's own libraries would load.
  for (env::LockPython& py : s->lock->pythons) {
    Elf exe;
    const bool have_exe = !py.interpreter.empty() && ReadElf(s, py.interpreter, &exe, false);
    for (const std::string& site : SiteDirs(*s, py)) {
      const std::string lib = site + "/torch/lib";
      for (const std::string& name : List(*s, lib)) {
        if (name.find(".so") == std::string::npos) continue;
        Elf object;
        if (!ReadElf(s, lib + "/" + name, &object, true)) continue;
        for (const std::string& needed : object.dyn.needed) {
          if (LibraryFamily(needed).empty()) continue;
          py.resolutions.push_back(Resolve(s, needed, &object, have_exe ? &exe : nullptr));
        }
      }
    }
  }
  // From the job's own point of view: every tracked soname on the machine.
  std::set<std::string> names;
  for (const env::LockLibrary& l : s->lock->libraries) {
    if (!l.soname.empty()) names.insert(l.soname);
    for (const std::string& alias : l.aliases) {
      std::string base = BaseName(alias);
      size_t so = base.find(".so.");
      // "libcudnn.so.9": the name a DT_NEEDED uses (one number after .so).
      if (so != std::string::npos && base.find('.', so + 4) == std::string::npos) {
        names.insert(base);
      }
    }
  }
  for (const std::string& name : names) {
    s->lock->resolutions.push_back(Resolve(s, name, nullptr, nullptr));
  }
}

}  // namespace vigil::collect::scan
