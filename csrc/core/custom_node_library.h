// A custom-node shared library, opened and resolved as OVMS does (COMPAT.md §1.2).
//
// load() dlopens the file with RTLD_LAZY | RTLD_LOCAL and looks up the six ABI functions in
// the order OVMS does. A library that loaded is never dlclosed: output tensors and internal
// managers may outlive every reference to it, and OVMS leaks its handles by design too.
// Loading one path twice yields two objects over the same handle (dlopen counts references).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "custom_node_interface.h"

namespace ovmsx {

// The six entry points of custom_node_interface.h; all are non-null once loaded.
struct CustomNodeFunctions {
  decltype(&::initialize) initialize = nullptr;
  decltype(&::deinitialize) deinitialize = nullptr;
  decltype(&::execute) execute = nullptr;
  decltype(&::getInputsInfo) get_inputs_info = nullptr;
  decltype(&::getOutputsInfo) get_outputs_info = nullptr;
  decltype(&::release) release = nullptr;
};

class CustomNodeLibrary {
 public:
  // Throws StatusError NODE_LIBRARY_LOAD_FAILED_OPEN when dlopen fails, and
  // NODE_LIBRARY_LOAD_FAILED_SYM (after dlclose) when a symbol is missing.
  static std::shared_ptr<const CustomNodeLibrary> load(const std::string& path);

  const std::string& path() const noexcept { return path_; }
  const CustomNodeFunctions& functions() const noexcept { return functions_; }

  CustomNodeLibrary(std::string path, CustomNodeFunctions functions)
      : path_(std::move(path)), functions_(functions) {}

 private:
  std::string path_;
  CustomNodeFunctions functions_;
};

}  // namespace ovmsx
