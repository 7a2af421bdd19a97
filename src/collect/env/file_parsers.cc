#include "collect/env/file_parsers.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace vigil::collect {
namespace {

std::string Unquote(std::string_view v) {
  v = TrimSpace(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return std::string(v);
}

// Calls f(line) for each line, without its '\n' (or "\r\n").
template <typename F>
void ForEachLine(std::string_view text, F f) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!f(line)) return;
    start = nl + 1;
  }
}

bool IsVersionChar(char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }

// Whether `s` looks like "550.54.15": digits and dots, starting with a digit.
bool IsDottedVersion(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!IsVersionChar(c)) return false;
  }
  return true;
}

// "#define NAME 8" anywhere in a header; nullopt-like -1 when absent.
int64_t DefineValue(std::string_view text, std::string_view name) {
  int64_t found = -1;
  ForEachLine(text, [&](std::string_view line) {
    std::vector<std::string_view> f = SplitFields(line);
    if (f.size() >= 3 && f[0] == "#define" && f[1] == name) {
      if (auto v = ParseInt64(f[2])) {
        found = *v;
        return false;
      }
    }
    return true;
  });
  return found;
}

// "MAJOR.MINOR.PATCH" from three #defines; a missing patch level is 0.
Result<std::string> DefinedVersion(std::string_view text, std::string_view major_name,
                                   std::string_view minor_name, std::string_view patch_name) {
  int64_t major = DefineValue(text, major_name);
  int64_t minor = DefineValue(text, minor_name);
  int64_t patch = DefineValue(text, patch_name);
  if (major < 0 || minor < 0) {
    return InvalidArgument("no " + std::string(major_name) + "/" + std::string(minor_name) +
                           " defines");
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch < 0 ? 0 : patch);
}

Result<nlohmann::json> ParseJson(std::string_view text, const char* what) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument(std::string(what) + ": not valid JSON");
  if (!j.is_object()) return InvalidArgument(std::string(what) + ": not a JSON object");
  return j;
}

std::string StringField(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::map<std::string, std::string> ParseOsRelease(std::string_view text) {
  std::map<std::string, std::string> out;
  ForEachLine(text, [&](std::string_view line) {
    line = TrimSpace(line);
    size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string_view::npos || eq == 0) return true;
    out[std::string(line.substr(0, eq))] = Unquote(line.substr(eq + 1));
    return true;
  });
  return out;
}

Result<DriverVersion> ParseDriverVersion(std::string_view text) {
  Result<DriverVersion> out = NotFound("no \"NVRM version\" line");
  ForEachLine(text, [&](std::string_view line) {
    if (!StartsWith(line, "NVRM version:")) return true;
    DriverVersion d;
    d.flavor = line.find("Open Kernel Module") != std::string_view::npos ? "open" : "proprietary";
    // The version is the first dotted number after "Module" (the open
    // module's line has "for x86_64" in between).
    size_t module = line.find("Module");
    std::string_view rest = module == std::string_view::npos ? line : line.substr(module);
    for (std::string_view f : SplitFields(rest)) {
      if (IsDottedVersion(f) && f.find('.') != std::string_view::npos) {
        d.version = std::string(f);
        break;
      }
    }
    if (d.version.empty()) {
      out = InvalidArgument("no version number on the NVRM version line");
    } else {
      out = d;
    }
    return false;
  });
  return out;
}

Result<PackageMetadata> ParseDistMetadata(std::string_view text) {
  PackageMetadata m;
  ForEachLine(text, [&](std::string_view line) {
    if (line.empty()) return false;  // the headers end at the first blank line
    if (StartsWith(line, "Name:")) m.name = std::string(TrimSpace(line.substr(5)));
    if (StartsWith(line, "Version:")) m.version = std::string(TrimSpace(line.substr(8)));
    return m.name.empty() || m.version.empty();
  });
  if (m.name.empty() || m.version.empty()) {
    return InvalidArgument("package metadata without Name and Version headers");
  }
  return m;
}

Result<TorchBuild> ParseTorchVersionPy(std::string_view text) {
  TorchBuild t;
  bool have_version = false;
  ForEachLine(text, [&](std::string_view line) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return true;
    std::string_view lhs = TrimSpace(line.substr(0, eq));
    // `cuda: Optional[str] = '12.1'` has an annotation before the '='.
    lhs = lhs.substr(0, lhs.find(':'));
    lhs = TrimSpace(lhs);
    std::string value = Unquote(line.substr(eq + 1));
    if (lhs == "__version__") {
      t.version = value;
      have_version = true;
    } else if (lhs == "cuda") {
      t.cuda = value == "None" ? "" : value;
    }
    return true;
  });
  if (!have_version) return InvalidArgument("torch/version.py without __version__");
  return t;
}

Result<std::string> ParseCudaVersionJson(std::string_view text) {
  VIGIL_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text, "version.json"));
  auto cuda = j.find("cuda");
  if (cuda == j.end() || !cuda->is_object() || StringField(*cuda, "version").empty()) {
    return InvalidArgument("version.json: no cuda.version");
  }
  return StringField(*cuda, "version");
}

Result<std::string> ParseCudaVersionTxt(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(text);
  if (f.size() >= 3 && f[0] == "CUDA" && f[1] == "Version" && IsDottedVersion(f[2])) {
    return std::string(f[2]);
  }
  return InvalidArgument("version.txt: no \"CUDA Version X.Y.Z\"");
}

Result<CondaRecord> ParseCondaMeta(std::string_view text) {
  VIGIL_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text, "conda-meta record"));
  CondaRecord r{StringField(j, "name"), StringField(j, "version"), StringField(j, "build")};
  if (r.name.empty() || r.version.empty()) {
    return InvalidArgument("conda-meta record without name and version");
  }
  return r;
}

Result<std::string> ParseCudnnHeader(std::string_view text) {
  return DefinedVersion(text, "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL");
}

Result<std::string> ParseNcclHeader(std::string_view text) {
  return DefinedVersion(text, "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH");
}

std::map<std::string, std::string> ParsePyvenvCfg(std::string_view text) {
  std::map<std::string, std::string> out;
  ForEachLine(text, [&](std::string_view line) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return true;
    std::string key(TrimSpace(line.substr(0, eq)));
    if (!key.empty()) out[key] = std::string(TrimSpace(line.substr(eq + 1)));
    return true;
  });
  return out;
}

std::map<std::string, std::string> ParseEnvironFile(std::string_view text) {
  std::map<std::string, std::string> out;
  ForEachLine(text, [&](std::string_view line) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return true;
    out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    return true;
  });
  return out;
}

std::string SoVersionFromName(std::string_view name) {
  size_t so = name.find(".so.");
  if (so == std::string_view::npos) return "";
  std::string_view v = name.substr(so + 4);
  return IsDottedVersion(v) ? std::string(v) : std::string();
}

std::string GlibcVersionFromName(std::string_view name) {
  // libc-2.17.so
  if (!StartsWith(name, "libc-") || !EndsWith(name, ".so")) return "";
  std::string_view v = name.substr(5, name.size() - 8);
  return IsDottedVersion(v) ? std::string(v) : std::string();
}

std::string GlibcVersionFromBytes(std::string_view bytes) {
  static constexpr std::string_view kMarker = "release version ";
  size_t at = bytes.find("GNU C Library");
  if (at == std::string_view::npos) return "";
  size_t v = bytes.find(kMarker, at);
  if (v == std::string_view::npos || v - at > 200) return "";
  v += kMarker.size();
  size_t end = v;
  while (end < bytes.size() && end - v < 16 && IsVersionChar(bytes[end])) ++end;
  std::string_view out = bytes.substr(v, end - v);
  while (!out.empty() && out.back() == '.') out.remove_suffix(1);  // "2.36." ends a sentence
  return IsDottedVersion(out) ? std::string(out) : std::string();
}

}  // namespace vigil::collect
