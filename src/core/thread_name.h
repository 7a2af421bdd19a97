// Names a thread so that `top -H`, `perf report --sort comm` and gdb show
// which of Vigil's loops it runs. Linux keeps 15 bytes of a name: longer
// names are cut.
//
// Thread safety: call from any thread, for a thread that is still running.
#pragma once

#include <string_view>
#include <thread>

namespace vigil {

void NameThread(std::thread& thread, std::string_view name);

}  // namespace vigil
