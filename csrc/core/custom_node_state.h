// What one initialized custom node shares with every tensor it produced: its library, its
// params and the internal manager `initialize` returned (COMPAT.md §1.3).
//
// A CustomNodeState is immutable once built and safe to use from any thread without the GIL.
// Output tensors keep it alive through their memory owners, because `release` takes the
// manager: `deinitialize` runs in the destructor, so exactly once and only after the node is
// retired and every tensor viewing its outputs is gone.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/custom_node_library.h"

namespace ovmsx {

using CustomNodeParams = std::map<std::string, std::string>;

class CustomNodeState {
 public:
  // Calls initialize with a pointer to a NULL manager and these params (which the library
  // may keep pointers into: they live as long as the state). A non-zero return throws
  // StatusError NODE_LIBRARY_INITIALIZE_FAILED, and deinitialize is then never called.
  static std::shared_ptr<const CustomNodeState> initialize(
      std::shared_ptr<const CustomNodeLibrary> library, CustomNodeParams params);

  // deinitialize(manager); its return value is ignored, as in OVMS.
  ~CustomNodeState();
  CustomNodeState(const CustomNodeState&) = delete;
  CustomNodeState& operator=(const CustomNodeState&) = delete;

  const CustomNodeLibrary& loaded_library() const noexcept { return *library_; }
  const CustomNodeFunctions& functions() const noexcept { return library_->functions(); }
  const CustomNodeParam* params() const noexcept { return param_array_.data(); }
  int params_count() const noexcept { return static_cast<int>(param_array_.size()); }
  void* manager() const noexcept { return manager_; }

  // Gives `ptr` back to the library (release(ptr, manager)); NULL is never passed on.
  void release(void* ptr) const noexcept;

 private:
  CustomNodeState(std::shared_ptr<const CustomNodeLibrary> library, CustomNodeParams params);

  std::shared_ptr<const CustomNodeLibrary> library_;
  CustomNodeParams params_;                   // owns the strings param_array_ points into
  std::vector<CustomNodeParam> param_array_;  // what the ABI calls receive
  void* manager_ = nullptr;
  bool initialized_ = false;
};

// Releases a library pointer when the scope ends, unless dismissed.
class ReleaseOnExit {
 public:
  ReleaseOnExit(const CustomNodeState& state, void* ptr) noexcept : state_(state), ptr_(ptr) {}
  ~ReleaseOnExit() { state_.release(ptr_); }
  ReleaseOnExit(const ReleaseOnExit&) = delete;
  ReleaseOnExit& operator=(const ReleaseOnExit&) = delete;

  void dismiss() noexcept { ptr_ = nullptr; }

 private:
  const CustomNodeState& state_;
  void* ptr_;
};

}  // namespace ovmsx
