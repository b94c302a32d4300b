#include "core/custom_node_state.h"

#include <limits>
#include <utility>

#include "core/status.h"

namespace ovmsx {

CustomNodeState::CustomNodeState(std::shared_ptr<const CustomNodeLibrary> library,
                                 CustomNodeParams params)
    : library_(std::move(library)), params_(std::move(params)) {
  if (params_.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw StatusError(StatusCode::NODE_LIBRARY_INITIALIZE_FAILED,
                      "too many params; library: " + library_->path());
  }
  param_array_.reserve(params_.size());
  for (const auto& [key, value] : params_) {
    param_array_.push_back({key.c_str(), value.c_str()});
  }
}

std::shared_ptr<const CustomNodeState> CustomNodeState::initialize(
    std::shared_ptr<const CustomNodeLibrary> library, CustomNodeParams params) {
  std::shared_ptr<CustomNodeState> state(
      new CustomNodeState(std::move(library), std::move(params)));
  // COMPAT §1.3: the manager pointer handed to initialize is always NULL-initialised.
  void* manager = nullptr;
  const int rc = state->functions().initialize(&manager, state->params(), state->params_count());
  if (rc != 0) {
    // `state` dies uninitialized: OVMS never deinitializes a failed initialize.
    throw StatusError(StatusCode::NODE_LIBRARY_INITIALIZE_FAILED,
                      "initialize returned " + std::to_string(rc) +
                          "; library: " + state->loaded_library().path());
  }
  state->manager_ = manager;
  state->initialized_ = true;
  return state;
}

CustomNodeState::~CustomNodeState() {
  if (initialized_) {
    functions().deinitialize(manager_);
  }
}

void CustomNodeState::release(void* ptr) const noexcept {
  if (ptr != nullptr) {
    functions().release(ptr, manager_);
  }
}

}  // namespace ovmsx
