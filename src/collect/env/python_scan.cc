// Every Python on the machine: the system's, venvs (pyvenv.cfg) and conda
// envs (conda-meta/), found where people put them, with the packages their
// metadata lists and torch's own CUDA build. Read as files: Python never runs.
#include <algorithm>
#include <set>

#include "collect/env/file_parsers.h"
#include "collect/env/scan.h"
#include "core/strings.h"

namespace vigil::collect::scan {
namespace {

// Where venvs and conda installs live, searched to kSearchDepth levels.
const char* const kSearchRoots[] = {"/opt", "/root", "/home", "/workspace", "/srv"};
constexpr int kSearchDepth = 4;  // /home/alice/miniconda3/envs/train
constexpr size_t kMaxDirsVisited = 20000;
constexpr size_t kMaxPackages = 20000;

// "3.11" from "python3.11"; "" otherwise.
std::string VersionFromName(const std::string& name) {
  if (!StartsWith(name, "python")) return "";
  std::string v = name.substr(6);
  if (v.empty() || v.find('.') == std::string::npos) return "";
  for (char c : v) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return "";
  }
  return v;
}

// "3.11" from "3.11.4"; the version as it is when it has one dot.
std::string MajorMinor(const std::string& v) {
  size_t first = v.find('.');
  if (first == std::string::npos) return v;
  size_t second = v.find('.', first + 1);
  return second == std::string::npos ? v : v.substr(0, second);
}

class PythonFinder {
 public:
  explicit PythonFinder(Scan* s) : s_(s) {}

  void Run() {
    for (const char* p : {"/usr", "/usr/local"}) Consider(p);
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
      auto it = s_->job_env.find(var);
      if (it != s_->job_env.end() && !it->second.empty()) Consider(it->second);
    }
    if (auto it = s_->job_env.find("PATH"); it != s_->job_env.end()) {
      for (std::string_view dir : Split(it->second, ':')) {
        if (EndsWith(dir, "/bin")) Consider(DirName(std::string(dir)));
      }
    }
    for (const char* root : kSearchRoots) Walk(root, 0);
    // pyenv keeps its interpreters under a hidden directory the walk skips.
    std::vector<std::string> homes = {"/root"};
    for (const std::string& user : List(*s_, "/home")) homes.push_back("/home/" + user);
    for (const std::string& home : homes) {
      for (const std::string& v : List(*s_, home + "/.pyenv/versions")) {
        Consider(home + "/.pyenv/versions/" + v);
      }
    }
    if (visited_ > kMaxDirsVisited) {
      s_->Note("python search stopped after " + std::to_string(kMaxDirsVisited) +
               " directories; envs deeper in are not listed");
    }
  }

 private:
  void Walk(const std::string& dir, int depth) {
    if (depth > kSearchDepth || ++visited_ > kMaxDirsVisited) return;
    if (Consider(dir)) {
      // A prefix: its lib/ is not searched, but a conda base's envs are.
      for (const std::string& name : List(*s_, dir + "/envs")) Consider(dir + "/envs/" + name);
      return;
    }
    for (const std::string& name : List(*s_, dir)) {
      // Hidden directories hold caches, not envs; ".venv" is the exception.
      if (name[0] == '.' && name != ".venv") continue;
      if (name == "node_modules" || name == "site-packages" || name == "pkgs") continue;
      std::string child = dir == "/" ? "/" + name : dir + "/" + name;
      if (s_->fs->IsDir(child)) Walk(child, depth + 1);
    }
  }

  // Records `prefix` when it holds a Python; true if it does.
  bool Consider(const std::string& raw) {
    auto resolved = s_->fs->Resolve(raw);
    if (!resolved.ok() || !s_->fs->IsDir(*resolved)) return false;
    std::string prefix = *resolved;
    // The prefix is where bin/ really is: with a merged /usr, "/" (from
    // PATH's /bin) is /usr.
    if (auto bin = s_->fs->Resolve(prefix + "/bin"); bin.ok() && s_->fs->IsDir(*bin)) {
      prefix = DirName(*bin);
    }
    if (seen_.count(prefix) != 0) return true;
    env::LockPython py;
    py.prefix = prefix;
    const bool conda = s_->fs->IsDir(prefix + "/conda-meta");
    const bool venv = s_->fs->IsFile(prefix + "/pyvenv.cfg");
    py.kind = conda ? "conda" : venv ? "venv" : "system";
    FindInterpreter(&py);
    if (venv) ReadPyvenv(&py);
    if (py.interpreter.empty() && !conda && !venv) return false;
    if (py.version.empty()) py.version = VersionFromLibDir(prefix);
    seen_.insert(prefix);
    s_->lock->pythons.push_back(std::move(py));
    return true;
  }

  void FindInterpreter(env::LockPython* py) {
    const std::string bin = py->prefix + "/bin";
    std::vector<std::string> names;
    for (const std::string& n : List(*s_, bin)) {
      if (n == "python3" || n == "python" || !VersionFromName(n).empty()) names.push_back(n);
    }
    // python3 first (what a job runs), then the versioned name.
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      auto rank = [](const std::string& n) { return n == "python3" ? 0 : n == "python" ? 1 : 2; };
      return std::make_pair(rank(a), a) < std::make_pair(rank(b), b);
    });
    for (const std::string& n : names) {
      auto real = s_->fs->Resolve(bin + "/" + n);
      if (!real.ok() || !s_->fs->IsFile(*real)) continue;
      py->interpreter = *real;
      std::string v = VersionFromName(BaseName(*real));
      if (v.empty()) v = VersionFromName(n);
      py->version = v;
      return;
    }
  }

  void ReadPyvenv(env::LockPython* py) {
    auto cfg = ParsePyvenvCfg(s_->ReadSmall(py->prefix + "/pyvenv.cfg", 64 << 10));
    if (auto home = cfg.find("home"); home != cfg.end() && !home->second.empty()) {
      // home is the base interpreter's bin directory.
      auto real = s_->fs->Resolve(home->second);
      py->base_prefix = DirName(real.ok() ? *real : NormalizePath(home->second));
    }
    for (const char* key : {"version_info", "version"}) {
      if (auto v = cfg.find(key); v != cfg.end() && py->version.empty()) {
        py->version = MajorMinor(v->second);
      }
    }
  }

  std::string VersionFromLibDir(const std::string& prefix) {
    for (const char* lib : {"/lib", "/lib64"}) {
      for (const std::string& n : List(*s_, prefix + lib)) {
        std::string v = VersionFromName(n);
        if (!v.empty()) return v;
      }
    }
    return "";
  }

  Scan* s_;
  std::set<std::string> seen_;
  size_t visited_ = 0;
};

void ReadPipPackages(Scan* s, const std::string& site, env::LockPython* py) {
  for (const std::string& name : List(*s, site)) {
    std::string meta;
    if (EndsWith(name, ".dist-info")) {
      meta = site + "/" + name + "/METADATA";
    } else if (EndsWith(name, ".egg-info")) {
      meta = s->fs->IsDir(site + "/" + name) ? site + "/" + name + "/PKG-INFO" : site + "/" + name;
    } else {
      continue;
    }
    if (py->packages.size() >= kMaxPackages) return;
    // The headers come first; the long description after them is not needed.
    auto parsed = ParseDistMetadata(s->ReadSmall(meta, 64 << 10));
    if (!parsed.ok()) {
      s->Note(meta, parsed.status());
      continue;
    }
    py->packages.push_back({parsed->name, parsed->version, "", "pip"});
  }
}

void ReadCondaPackages(Scan* s, env::LockPython* py) {
  const std::string dir = py->prefix + "/conda-meta";
  for (const std::string& name : List(*s, dir)) {
    if (!EndsWith(name, ".json") || py->packages.size() >= kMaxPackages) continue;
    // Records list every file of the package: large, but bounded.
    auto rec = ParseCondaMeta(s->ReadSmall(dir + "/" + name, 32 << 20));
    if (!rec.ok()) {
      s->Note(dir + "/" + name, rec.status());
      continue;
    }
    py->packages.push_back({rec->name, rec->version, rec->build, "conda"});
  }
}

void ReadTorch(Scan* s, const std::string& site, env::LockPython* py) {
  const std::string path = site + "/torch/version.py";
  if (!py->torch_version.empty() || !s->fs->IsFile(path)) return;
  auto t = ParseTorchVersionPy(s->ReadSmall(path, 64 << 10));
  if (!t.ok()) {
    s->Note(path, t.status());
    return;
  }
  py->torch_version = t->version;
  py->torch_cuda = t->cuda;
}

}  // namespace

std::vector<std::string> SiteDirs(const Scan& s, const env::LockPython& py) {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    auto real = s.fs->Resolve(d);
    if (real.ok() && s.fs->IsDir(*real) && std::find(out.begin(), out.end(), *real) == out.end()) {
      out.push_back(*real);
    }
  };
  // RHEL splits pure (lib/) and compiled (lib64/) packages; both count.
  for (const char* lib : {"/lib/", "/lib64/"}) {
    for (const std::string& n : List(s, py.prefix + lib)) {
      if (!StartsWith(n, "python3")) continue;
      add(py.prefix + lib + n + "/site-packages");
      add(py.prefix + lib + n + "/dist-packages");
    }
  }
  add(py.prefix + "/lib/python3/dist-packages");  // Debian's system packages
  if (py.prefix == "/usr" && !py.version.empty()) {
    // Debian's pip installs for /usr/bin/python3 go to /usr/local.
    add("/usr/local/lib/python" + py.version + "/dist-packages");
  }
  return out;
}

void ScanPythons(Scan* s) {
  PythonFinder(s).Run();
  for (env::LockPython& py : s->lock->pythons) {
    for (const std::string& site : SiteDirs(*s, py)) {
      ReadPipPackages(s, site, &py);
      ReadTorch(s, site, &py);
    }
    if (py.kind == "conda") ReadCondaPackages(s, &py);
  }
}

}  // namespace vigil::collect::scan
