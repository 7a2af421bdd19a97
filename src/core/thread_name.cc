#include "core/thread_name.h"

#include <pthread.h>

#include <string>

namespace vigil {

void NameThread(std::thread& thread, std::string_view name) {
  std::string short_name(name.substr(0, 15));  // the kernel's limit, without the NUL
  (void)pthread_setname_np(thread.native_handle(), short_name.c_str());
}

}  // namespace vigil
