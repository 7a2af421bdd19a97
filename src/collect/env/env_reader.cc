#include "collect/env/env_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collect/env/file_parsers.h"
#include "collect/env/scan.h"
#include "core/strings.h"

namespace vigil::collect {
namespace scan {

std::string Reason(const Status& s) {
  // Our own parsers' messages name no host path; Env's do.
  if (s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kCorruption) {
    return s.message();
  }
  return StatusCodeName(s.code());
}

void Scan::Note(const std::string& path, const Status& why) {
  lock->notes.push_back(path + ": " + Reason(why));
}

std::string Scan::ReadSmall(const std::string& path, size_t max, bool note) {
  auto r = fs->ReadFile(path, max);
  if (!r.ok()) {
    if (note) Note(path, r.status());
    return "";
  }
  return std::move(r).value();
}

std::string NormalizePackageName(std::string n) {
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) {
    return c == '_' || c == '.' ? '-' : static_cast<char>(std::tolower(c));
  });
  return n;
}

std::vector<std::string> List(const Scan& s, const std::string& dir) {
  return s.fs->ListDir(dir).value_or({});
}

}  // namespace scan

bool IsLockedVariable(const std::string& name) {
  for (const char* secret : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"}) {
    if (name.find(secret) != std::string::npos) return false;
  }
  static const char* const kExact[] = {
      "LD_LIBRARY_PATH",
      "LD_PRELOAD",
      "PATH",
      "PYTHONPATH",
      "PYTHONHOME",
      "VIRTUAL_ENV",
      "CONDA_PREFIX",
      "CONDA_DEFAULT_ENV",
      "XLA_FLAGS",
      "OMP_NUM_THREADS",
      "TF_FORCE_GPU_ALLOW_GROWTH",
  };
  for (const char* e : kExact) {
    if (name == e) return true;
  }
  static const char* const kPrefixes[] = {"CUDA_",    "NCCL_",  "NVIDIA_",     "CUDNN_",
                                          "PYTORCH_", "TORCH_", "XLA_PYTHON_", "TF_GPU_"};
  for (const char* p : kPrefixes) {
    if (StartsWith(name, p)) return true;
  }
  return false;
}

Result<std::vector<env::LockGpu>> ParseGpusFile(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    return InvalidArgument(".vigil-gpus.json: must be a JSON list of GPU objects");
  }
  std::vector<env::LockGpu> out;
  for (const nlohmann::json& g : j) {
    if (!g.is_object()) return InvalidArgument(".vigil-gpus.json: every entry must be an object");
    env::LockGpu gpu;
    auto model = g.find("model");
    if (model == g.end() || !model->is_string()) {
      return InvalidArgument(".vigil-gpus.json: every GPU needs a \"model\" string");
    }
    gpu.model = model->get<std::string>();
    // "9.0" as NVIDIA writes it; a number (9.0) is accepted and written so.
    if (auto cc = g.find("compute_capability"); cc != g.end()) {
      if (cc->is_string()) {
        gpu.compute_capability = cc->get<std::string>();
      } else if (cc->is_number()) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.1f", cc->get<double>());
        gpu.compute_capability = buf;
      } else {
        return InvalidArgument(".vigil-gpus.json: \"compute_capability\" must be \"X.Y\"");
      }
    }
    if (auto mem = g.find("memory_mib"); mem != g.end()) {
      if (!mem->is_number_unsigned()) {
        return InvalidArgument(".vigil-gpus.json: \"memory_mib\" must be a non-negative integer");
      }
      gpu.memory_mib = mem->get<uint64_t>();
    }
    out.push_back(std::move(gpu));
  }
  return out;
}

Result<env::EnvLock> ReadEnvLock(const EnvReadOptions& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::string root = options.root;
  if (!root.empty() && root[0] != '/') {
    // Relative to the working directory, as a user typing --root means it.
    std::error_code ec;
    root = std::filesystem::absolute(root, ec).string();
  }
  const bool live = root.empty() || NormalizePath(root) == "/";
  struct stat st {};
  if (!live && (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    return InvalidArgument("--root " + options.root + " is not a directory");
  }
  RootedFs fs(env, live ? "" : root);
  env::EnvLock lock;
  lock.source = live ? "live" : "root";
  scan::Scan s;
  s.fs = &fs;
  s.lock = &lock;

  if (live) {
    s.job_env = options.live_environment;
  } else {
    // A copy without an environ file describes a job with an empty
    // environment: the host's is never a stand-in.
    auto text = fs.ReadFile("/environ", 1 << 20);
    if (text.ok()) {
      s.job_env = ParseEnvironFile(*text);
    } else {
      s.Note("/environ: " + scan::Reason(text.status()) + " (the job's environment is empty)");
    }
  }
  for (const auto& [k, v] : s.job_env) {
    if (IsLockedVariable(k)) lock.environment[k] = v;
  }

  if (live) {
    if (options.live_gpus) {
      auto gpus = options.live_gpus();
      if (gpus.ok()) {
        lock.gpu_source = "nvml";
        lock.gpus = std::move(gpus).value();
      } else {
        lock.gpu_source = "none";
        s.Note("GPUs: " + gpus.status().message());
      }
    } else {
      lock.gpu_source = "none";
    }
  } else {
    auto text = fs.ReadFile("/.vigil-gpus.json", 1 << 20);
    if (!text.ok()) {
      lock.gpu_source = "none";
      s.Note("/.vigil-gpus.json: " + scan::Reason(text.status()) + " (no GPUs recorded)");
    } else if (auto gpus = ParseGpusFile(*text); gpus.ok()) {
      lock.gpu_source = "file";
      lock.gpus = std::move(gpus).value();
    } else {
      lock.gpu_source = "none";
      s.Note(gpus.status().message());
    }
  }

  scan::ScanSystem(&s);
  scan::ScanPythons(&s);
  scan::ScanCuda(&s);
  scan::ScanLibraries(&s);
  scan::ScanLoads(&s);
  env::Canonicalize(&lock);
  return lock;
}

}  // namespace vigil::collect
