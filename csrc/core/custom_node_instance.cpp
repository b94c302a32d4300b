#include "core/custom_node_instance.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/custom_node_precision.h"
#include "core/status.h"

namespace ovmsx {
namespace {

// Node authors cast input data to the element type (const float*), which is only defined on
// memory aligned to the element's size; a request's raw contents can sit at any offset of the
// received message, so such inputs are handed over as an aligned copy (new[] aligns as malloc
// does). UINT8 needs no copy; an UNSPECIFIED input may be read as anything, so it is held to
// new[]'s alignment.
std::size_t required_alignment(CustomNodeTensorPrecision precision) {
  const auto element = element_of_precision(precision);
  return element ? element->itemsize : __STDCPP_DEFAULT_NEW_ALIGNMENT__;
}

bool is_aligned(const std::uint8_t* data, std::size_t alignment) noexcept {
  return reinterpret_cast<std::uintptr_t>(data) % alignment == 0;
}

// The CustomNodeTensor[] a library reads its inputs from, pointing into the Tensors' memory
// (or into an aligned copy of it).
class InputViews {
 public:
  explicit InputViews(const std::vector<std::shared_ptr<Tensor>>& inputs) {
    if (inputs.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      throw std::invalid_argument("too many inputs for a custom node");
    }
    std::size_t dims_total = 0;
    for (const auto& input : inputs) {
      if (!input) {
        throw std::invalid_argument("a custom node input is None");
      }
      dims_total += input->shape().size();
    }
    // Sized once, so that the dims pointers below stay valid.
    dims_.reserve(dims_total);
    views_.reserve(inputs.size());
    for (const auto& input : inputs) {
      std::uint64_t* dims = dims_.data() + dims_.size();
      for (const std::int64_t dim : input->shape()) {
        if (dim < 0) {
          throw StatusError(StatusCode::INVALID_SHAPE,
                            "Negative dimension size is not acceptable: " +
                                shape_to_string(input->shape()) + "; input: " + input->name());
        }
        dims_.push_back(static_cast<std::uint64_t>(dim));
      }
      // The ABI's data is non-const uint8_t*, but a library must not write to inputs
      // (custom node guide: other nodes may read the same buffer).
      const CustomNodeTensorPrecision precision = precision_of_datatype(input->datatype());
      const std::uint8_t* data = input->data();
      if (!is_aligned(data, required_alignment(precision))) {
        copies_.push_back(allocate_bytes(input->size(), false));
        std::memcpy(copies_.back().get(), data, input->size());
        data = copies_.back().get();
      }
      views_.push_back({input->name().c_str(), const_cast<std::uint8_t*>(data), input->size(), dims,
                        input->shape().size(), precision});
    }
  }

  const CustomNodeTensor* data() const noexcept { return views_.data(); }
  int count() const noexcept { return static_cast<int>(views_.size()); }

 private:
  std::vector<std::uint64_t> dims_;
  std::vector<std::shared_ptr<std::uint8_t[]>> copies_;  // of the inputs that were not aligned
  std::vector<CustomNodeTensor> views_;
};

}  // namespace

CustomNode::CustomNode(std::shared_ptr<const CustomNodeLibrary> library, CustomNodeParams params)
    : path_(library->path()) {
  state_ = CustomNodeState::initialize(std::move(library), std::move(params));
}

std::shared_ptr<const CustomNodeState> CustomNode::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!state_) {
    throw StatusError(StatusCode::NODE_LIBRARY_MISSING,
                      "the custom node was closed; library: " + path_);
  }
  return state_;
}

std::vector<TensorInfo> CustomNode::inputs_info() const {
  const auto current = state();
  CustomNodeTensorInfo* info = nullptr;
  int count = 0;
  const int rc = current->functions().get_inputs_info(&info, &count, current->params(),
                                                      current->params_count(), current->manager());
  return take_tensor_infos(*current, "getInputsInfo", rc, info, count);
}

std::vector<TensorInfo> CustomNode::outputs_info() const {
  const auto current = state();
  CustomNodeTensorInfo* info = nullptr;
  int count = 0;
  const int rc = current->functions().get_outputs_info(&info, &count, current->params(),
                                                       current->params_count(), current->manager());
  return take_tensor_infos(*current, "getOutputsInfo", rc, info, count);
}

std::vector<std::shared_ptr<Tensor>> CustomNode::execute(
    const std::vector<std::shared_ptr<Tensor>>& inputs) const {
  const auto current = state();
  const InputViews views(inputs);
  CustomNodeTensor* outputs = nullptr;
  int count = 0;
  const int rc =
      current->functions().execute(views.data(), views.count(), &outputs, &count, current->params(),
                                   current->params_count(), current->manager());
  return take_outputs(current, rc, outputs, count);
}

void CustomNode::close() {
  std::shared_ptr<const CustomNodeState> retired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    retired = std::move(state_);
  }
  // `retired` dies here, outside the lock: this may be the last reference, and deinitialize
  // may take its time.
}

}  // namespace ovmsx
