#include "env/lock/lock_format.h"

#include <nlohmann/json.hpp>

namespace vigil::env {
namespace {

using Out = nlohmann::ordered_json;
using In = nlohmann::json;

// --- writing: keys in the order docs/env-lock.md lists them ---

Out Strings(const std::vector<std::string>& v) {
  Out a = Out::array();
  for (const std::string& s : v) a.push_back(s);
  return a;
}

Out ToJson(const LockResolution& r) {
  Out o;
  if (!r.consumer.empty()) o["consumer"] = r.consumer;
  o["needed"] = r.needed;
  o["resolved"] = r.resolved;
  o["via"] = r.via;
  o["shadowed"] = Strings(r.shadowed);
  return o;
}

Out Resolutions(const std::vector<LockResolution>& v) {
  Out a = Out::array();
  for (const LockResolution& r : v) a.push_back(ToJson(r));
  return a;
}

Out ToJson(const LockPython& p) {
  Out o;
  o["prefix"] = p.prefix;
  o["kind"] = p.kind;
  o["interpreter"] = p.interpreter;
  o["version"] = p.version;
  o["base_prefix"] = p.base_prefix;
  o["torch"] = Out{{"version", p.torch_version}, {"cuda", p.torch_cuda}};
  Out packages = Out::array();
  for (const LockPackage& k : p.packages) {
    packages.push_back(Out{
        {"name", k.name}, {"version", k.version}, {"build", k.build}, {"installer", k.installer}});
  }
  o["packages"] = std::move(packages);
  o["resolutions"] = Resolutions(p.resolutions);
  return o;
}

// --- reading: every field optional, but a present one must have its type ---

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  const Status& status() const { return status_; }

  void Str(const In& o, const char* key, std::string* out) {
    const In* v = Find(o, key);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(key, "a string");
    *out = v->get<std::string>();
  }
  void Uint(const In& o, const char* key, uint64_t* out) {
    const In* v = Find(o, key);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) return Fail(key, "a non-negative integer");
    *out = v->get<uint64_t>();
  }
  void Strs(const In& o, const char* key, std::vector<std::string>* out) {
    const In* v = Find(o, key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(key, "a list of strings");
    for (const In& e : *v) {
      if (!e.is_string()) return Fail(key, "a list of strings");
      out->push_back(e.get<std::string>());
    }
  }
  // Calls `each` for every object in the list at `key`.
  template <typename F>
  void Objects(const In& o, const char* key, F each) {
    const In* v = Find(o, key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(key, "a list of objects");
    for (const In& e : *v) {
      if (!e.is_object()) return Fail(key, "a list of objects");
      each(e);
      if (!status_.ok()) return;
    }
  }
  void Fail(const char* key, const char* want) {
    if (status_.ok()) {
      status_ = InvalidArgument(where_ + ": \"" + key + "\" must be " + want);
    }
  }
  const In* Object(const In& o, const char* key) {
    const In* v = Find(o, key);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      Fail(key, "an object");
      return nullptr;
    }
    return v;
  }

 private:
  const In* Find(const In& o, const char* key) {
    if (!status_.ok()) return nullptr;
    auto it = o.find(key);
    return it == o.end() || it->is_null() ? nullptr : &*it;
  }
  std::string where_;
  Status status_;
};

void ReadResolution(Reader* r, const In& o, LockResolution* out) {
  r->Str(o, "consumer", &out->consumer);
  r->Str(o, "needed", &out->needed);
  r->Str(o, "resolved", &out->resolved);
  r->Str(o, "via", &out->via);
  r->Strs(o, "shadowed", &out->shadowed);
}

void ReadPython(Reader* r, const In& o, LockPython* p) {
  r->Str(o, "prefix", &p->prefix);
  r->Str(o, "kind", &p->kind);
  r->Str(o, "interpreter", &p->interpreter);
  r->Str(o, "version", &p->version);
  r->Str(o, "base_prefix", &p->base_prefix);
  if (const In* t = r->Object(o, "torch")) {
    r->Str(*t, "version", &p->torch_version);
    r->Str(*t, "cuda", &p->torch_cuda);
  }
  r->Objects(o, "packages", [&](const In& e) {
    LockPackage k;
    r->Str(e, "name", &k.name);
    r->Str(e, "version", &k.version);
    r->Str(e, "build", &k.build);
    r->Str(e, "installer", &k.installer);
    p->packages.push_back(std::move(k));
  });
  r->Objects(o, "resolutions",
             [&](const In& e) { ReadResolution(r, e, &p->resolutions.emplace_back()); });
}

void ReadBody(Reader* r, const In& j, EnvLock* lock) {
  r->Str(j, "source", &lock->source);
  if (const In* os = r->Object(j, "os")) {
    r->Str(*os, "id", &lock->os.id);
    r->Str(*os, "version_id", &lock->os.version_id);
    r->Str(*os, "pretty_name", &lock->os.pretty_name);
    r->Str(*os, "kernel", &lock->os.kernel);
    r->Str(*os, "glibc", &lock->os.glibc);
    r->Str(*os, "glibc_path", &lock->os.glibc_path);
  }
  if (const In* d = r->Object(j, "driver")) {
    r->Str(*d, "version", &lock->driver.version);
    r->Str(*d, "flavor", &lock->driver.flavor);
  }
  r->Str(j, "gpu_source", &lock->gpu_source);
  r->Objects(j, "gpus", [&](const In& e) {
    LockGpu& g = lock->gpus.emplace_back();
    r->Str(e, "model", &g.model);
    r->Str(e, "compute_capability", &g.compute_capability);
    r->Uint(e, "memory_mib", &g.memory_mib);
  });
  r->Objects(j, "cuda", [&](const In& e) {
    LockCuda& c = lock->cuda.emplace_back();
    r->Str(e, "path", &c.path);
    r->Str(e, "kind", &c.kind);
    r->Str(e, "version", &c.version);
    r->Str(e, "version_source", &c.version_source);
    r->Strs(e, "aliases", &c.aliases);
  });
  r->Objects(j, "libraries", [&](const In& e) {
    LockLibrary& l = lock->libraries.emplace_back();
    r->Str(e, "family", &l.family);
    r->Str(e, "path", &l.path);
    r->Str(e, "soname", &l.soname);
    r->Str(e, "version", &l.version);
    r->Str(e, "version_source", &l.version_source);
    r->Strs(e, "aliases", &l.aliases);
  });
  r->Objects(j, "headers", [&](const In& e) {
    LockHeader& h = lock->headers.emplace_back();
    r->Str(e, "family", &h.family);
    r->Str(e, "path", &h.path);
    r->Str(e, "version", &h.version);
  });
  r->Objects(j, "pythons", [&](const In& e) { ReadPython(r, e, &lock->pythons.emplace_back()); });
  r->Objects(j, "resolutions",
             [&](const In& e) { ReadResolution(r, e, &lock->resolutions.emplace_back()); });
  if (const In* vars = r->Object(j, "environment")) {
    for (auto it = vars->begin(); it != vars->end(); ++it) {
      if (!it->is_string()) {
        return r->Fail("environment", "an object of strings");
      }
      lock->environment[it.key()] = it->get<std::string>();
    }
  }
  r->Strs(j, "notes", &lock->notes);
}

}  // namespace

std::string WriteLock(const EnvLock& input) {
  EnvLock lock = input;
  Canonicalize(&lock);
  Out j;
  j["format"] = lock.format;
  j["source"] = lock.source;
  j["os"] = Out{{"id", lock.os.id},
                {"version_id", lock.os.version_id},
                {"pretty_name", lock.os.pretty_name},
                {"kernel", lock.os.kernel},
                {"glibc", lock.os.glibc},
                {"glibc_path", lock.os.glibc_path}};
  j["driver"] = Out{{"version", lock.driver.version}, {"flavor", lock.driver.flavor}};
  j["gpu_source"] = lock.gpu_source;
  Out gpus = Out::array();
  for (const LockGpu& g : lock.gpus) {
    gpus.push_back(Out{{"model", g.model},
                       {"compute_capability", g.compute_capability},
                       {"memory_mib", g.memory_mib}});
  }
  j["gpus"] = std::move(gpus);
  Out cuda = Out::array();
  for (const LockCuda& c : lock.cuda) {
    cuda.push_back(Out{{"path", c.path},
                       {"kind", c.kind},
                       {"version", c.version},
                       {"version_source", c.version_source},
                       {"aliases", Strings(c.aliases)}});
  }
  j["cuda"] = std::move(cuda);
  Out libs = Out::array();
  for (const LockLibrary& l : lock.libraries) {
    libs.push_back(Out{{"family", l.family},
                       {"path", l.path},
                       {"soname", l.soname},
                       {"version", l.version},
                       {"version_source", l.version_source},
                       {"aliases", Strings(l.aliases)}});
  }
  j["libraries"] = std::move(libs);
  Out headers = Out::array();
  for (const LockHeader& h : lock.headers) {
    headers.push_back(Out{{"family", h.family}, {"path", h.path}, {"version", h.version}});
  }
  j["headers"] = std::move(headers);
  Out pythons = Out::array();
  for (const LockPython& p : lock.pythons) pythons.push_back(ToJson(p));
  j["pythons"] = std::move(pythons);
  j["resolutions"] = Resolutions(lock.resolutions);
  Out vars = Out::object();
  for (const auto& [k, v] : lock.environment) vars[k] = v;  // std::map: sorted
  j["environment"] = std::move(vars);
  j["notes"] = Strings(lock.notes);
  // Bytes read from a machine need not be UTF-8: replaced, never a throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<EnvLock> ParseLock(std::string_view text) {
  In j = In::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("env lock: not valid JSON");
  if (!j.is_object()) return InvalidArgument("env lock: the top level must be an object");
  auto format = j.find("format");
  if (format == j.end() || !format->is_number_integer()) {
    return InvalidArgument("env lock: no \"format\" number (not a lock file?)");
  }
  if (format->get<int64_t>() != kLockFormatVersion) {
    return InvalidArgument("env lock: format " + std::to_string(format->get<int64_t>()) +
                           " is not supported (this vigil reads format " +
                           std::to_string(kLockFormatVersion) + ")");
  }
  EnvLock lock;
  Reader reader("env lock");
  ReadBody(&reader, j, &lock);
  if (!reader.status().ok()) return reader.status();
  return lock;
}

}  // namespace vigil::env
