// Fuzz target: the /proc parsers (files are untrusted: containers and FUSE
// can present anything).
#include <cstdint>
#include <string_view>

#include "collect/metrics/proc_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vigil::collect::proc;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)ParseProcStat(in);
  (void)ParseMeminfo(in);
  (void)ParseLoadavg(in);
  (void)ParseDiskstats(in);
  (void)ParseNetDev(in);
  (void)ParseMounts(in);
  (void)ParseKeyValues(in);
  (void)ParsePressure(in);
  (void)ParseFileNr(in);
  (void)UnescapeMountField(in);
  return 0;
}
