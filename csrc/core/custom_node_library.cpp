#include "core/custom_node_library.h"

#include <dlfcn.h>

#include <utility>

#include "core/status.h"

namespace ovmsx {
namespace {

std::string last_dl_error() {
  const char* error = dlerror();
  return error ? error : "unknown error";
}

// dlsym returns void*; POSIX guarantees it converts to a function pointer.
template <typename Function>
void resolve(void* handle, const char* symbol, const std::string& path, Function& out) {
  dlerror();  // clear any earlier error, so that a NULL below is this lookup's
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    std::string reason = last_dl_error();
    dlclose(handle);
    throw StatusError(
        StatusCode::NODE_LIBRARY_LOAD_FAILED_SYM,
        "symbol " + std::string(symbol) + " is missing; library: " + path + "; " + reason);
  }
  out = reinterpret_cast<Function>(address);
}

}  // namespace

std::shared_ptr<const CustomNodeLibrary> CustomNodeLibrary::load(const std::string& path) {
  // COMPAT §1.2: RTLD_LOCAL keeps the six generic names of one library from resolving
  // another's; RTLD_LAZY as OVMS, so a library loads the same way in both servers.
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    throw StatusError(StatusCode::NODE_LIBRARY_LOAD_FAILED_OPEN,
                      "library: " + path + "; " + last_dl_error());
  }
  CustomNodeFunctions functions;
  // The order OVMS looks them up in, so the same symbol is reported missing first.
  resolve(handle, "initialize", path, functions.initialize);
  resolve(handle, "deinitialize", path, functions.deinitialize);
  resolve(handle, "execute", path, functions.execute);
  resolve(handle, "getInputsInfo", path, functions.get_inputs_info);
  resolve(handle, "getOutputsInfo", path, functions.get_outputs_info);
  resolve(handle, "release", path, functions.release);
  // The handle is deliberately never closed (see the header).
  return std::make_shared<const CustomNodeLibrary>(path, functions);
}

}  // namespace ovmsx
