// OS, kernel, glibc and the loaded driver; and the loader's configuration
// (ld.so.conf, default directories) the library scan and loader use.
#include "collect/env/file_parsers.h"
#include "collect/env/scan.h"
#include "core/strings.h"

namespace vigil::collect::scan {
namespace {

// Where glibc puts libc.so.6: RHEL and its kin in /lib64 (the lib/lib64
// split), Debian and Ubuntu in the multiarch directories.
const char* const kLibcDirs[] = {"/lib64",
                                 "/usr/lib64",
                                 "/lib/x86_64-linux-gnu",
                                 "/usr/lib/x86_64-linux-gnu",
                                 "/lib/aarch64-linux-gnu",
                                 "/usr/lib/aarch64-linux-gnu",
                                 "/lib",
                                 "/usr/lib"};

void ReadGlibc(Scan* s) {
  for (const char* dir : kLibcDirs) {
    std::string path = std::string(dir) + "/libc.so.6";
    if (!s->fs->IsFile(path)) continue;
    auto real = s->fs->Resolve(path);
    if (!real.ok()) continue;
    s->lock->os.glibc_path = *real;
    // glibc < 2.34: libc.so.6 -> libc-2.17.so. Newer: the file itself, whose
    // banner string says "... release version 2.36".
    std::string v = GlibcVersionFromName(BaseName(*real));
    if (v.empty()) {
      auto bytes = s->fs->ReadFile(*real, 4 << 20);
      if (bytes.ok()) v = GlibcVersionFromBytes(*bytes);
    }
    if (v.empty()) s->Note(*real + ": glibc version not found in its name or banner");
    s->lock->os.glibc = v;
    return;
  }
}

// /etc/ld.so.conf and its includes ("include /etc/ld.so.conf.d/*.conf"):
// the directories ldconfig puts in the cache, in order.
void ReadLdConf(Scan* s, const std::string& path, int depth) {
  if (depth > 4) return;  // includes that include themselves
  std::string text = s->ReadSmall(path, 256 << 10, /*note=*/false);
  for (std::string_view line : Split(text, '\n')) {
    line = TrimSpace(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    if (StartsWith(line, "include")) {
      std::string pattern(TrimSpace(line.substr(7)));
      if (pattern.empty()) continue;
      if (pattern[0] != '/') pattern = DirName(path) + "/" + pattern;
      // Only the "*.conf"-style wildcard in the last component is supported,
      // which is what every distribution ships.
      std::string dir = DirName(pattern), glob = BaseName(pattern);
      size_t star = glob.find('*');
      for (const std::string& name : List(*s, dir)) {
        bool match = star == std::string::npos ? name == glob
                                               : StartsWith(name, glob.substr(0, star)) &&
                                                     EndsWith(name, glob.substr(star + 1)) &&
                                                     name.size() >= glob.size() - 1;
        if (match) ReadLdConf(s, dir + "/" + name, depth + 1);
      }
      continue;
    }
    if (line[0] == '/') s->ld_conf_dirs.push_back(NormalizePath(std::string(line)));
  }
}

}  // namespace

void ScanSystem(Scan* s) {
  env::LockOs& os = s->lock->os;
  std::string release = s->ReadSmall("/etc/os-release", 64 << 10, false);
  if (release.empty()) release = s->ReadSmall("/usr/lib/os-release", 64 << 10, false);
  if (release.empty()) {
    s->Note("/etc/os-release: not found");
  } else {
    auto kv = ParseOsRelease(release);
    os.id = kv["ID"];
    os.version_id = kv["VERSION_ID"];
    os.pretty_name = kv["PRETTY_NAME"];
  }
  os.kernel = std::string(TrimSpace(s->ReadSmall("/proc/sys/kernel/osrelease", 4096)));
  ReadGlibc(s);

  // The kernel module actually loaded: a toolkit's version.json names the
  // driver it shipped with, not the one that runs.
  auto driver = s->fs->ReadFile("/proc/driver/nvidia/version", 64 << 10);
  if (driver.ok()) {
    auto d = ParseDriverVersion(*driver);
    if (d.ok()) {
      s->lock->driver = {d->version, d->flavor};
    } else {
      s->Note("/proc/driver/nvidia/version", d.status());
    }
  }

  ReadLdConf(s, "/etc/ld.so.conf", 0);
  // glibc's trusted directories after the cache; which of lib64 or the
  // multiarch ones exist depends on the distribution, so all are listed and
  // the missing ones simply hold nothing.
  s->default_dirs = {"/lib/x86_64-linux-gnu",
                     "/usr/lib/x86_64-linux-gnu",
                     "/lib/aarch64-linux-gnu",
                     "/usr/lib/aarch64-linux-gnu",
                     "/lib64",
                     "/usr/lib64",
                     "/lib",
                     "/usr/lib"};
}

}  // namespace vigil::collect::scan
