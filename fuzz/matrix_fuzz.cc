// Fuzz target: the compatibility matrix's file format (src/env/matrix.h,
// docs/env-matrix.md). An update file is written by hand or fetched by a
// user; it may hold anything. Whatever parses must write back to text that
// parses to the same rows, merge over the built-in matrix, and survive the
// consistency checks; the version readers take the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "env/matrix.h"
#include "env/version.h"

namespace env = vigil::env;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)env::ParseVersion(text);
  (void)env::ParseTorchVersion(text);
  (void)env::ParseComputeCapability(text);
  (void)env::GpuNameTokens(text);
  auto m = env::Matrix::Parse(text, "fuzz");
  if (!m.ok()) return 0;
  auto again = env::Matrix::Parse(m->Serialize(), "serialized");
  if (!again.ok() || again->rows().size() != m->rows().size()) std::abort();
  for (size_t i = 0; i < m->rows().size(); ++i) {
    if (again->rows()[i].fields != m->rows()[i].fields) std::abort();
  }
  (void)m->Problems();
  auto merged = env::Matrix::Builtin().MergedWith(*m);
  if (!merged.ok()) std::abort();  // rows that parsed alone merge
  (void)merged->Problems();
  return 0;
}
