#include "env/lock/lock.h"

#include <algorithm>
#include <tuple>

namespace vigil::env {
namespace {

template <typename T, typename Key>
void SortBy(std::vector<T>* v, Key key) {
  std::sort(v->begin(), v->end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

void SortStrings(std::vector<std::string>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

void CanonicalizeResolutions(std::vector<LockResolution>* v) {
  for (LockResolution& r : *v) SortStrings(&r.shadowed);
  SortBy(v, [](const LockResolution& r) { return std::tie(r.consumer, r.needed, r.resolved); });
}

}  // namespace

void Canonicalize(EnvLock* lock) {
  SortBy(&lock->gpus,
         [](const LockGpu& g) { return std::tie(g.model, g.compute_capability, g.memory_mib); });
  for (LockCuda& c : lock->cuda) SortStrings(&c.aliases);
  SortBy(&lock->cuda, [](const LockCuda& c) { return std::tie(c.path, c.kind); });
  for (LockLibrary& l : lock->libraries) SortStrings(&l.aliases);
  SortBy(&lock->libraries, [](const LockLibrary& l) { return std::tie(l.family, l.path); });
  SortBy(&lock->headers, [](const LockHeader& h) { return std::tie(h.family, h.path); });
  for (LockPython& p : lock->pythons) {
    SortBy(&p.packages,
           [](const LockPackage& k) { return std::tie(k.name, k.installer, k.version, k.build); });
    CanonicalizeResolutions(&p.resolutions);
  }
  SortBy(&lock->pythons, [](const LockPython& p) { return std::tie(p.prefix, p.kind); });
  CanonicalizeResolutions(&lock->resolutions);
  SortStrings(&lock->notes);
}

}  // namespace vigil::env
