// Taking over what a custom-node library returned, under the rules of COMPAT.md §1.3.
//
// Both functions own every pointer they are given from the moment they are called: each one
// goes back through the library's `release` exactly once, whether conversion succeeds or
// throws. Output data is not copied: each output Tensor views the library's buffer and
// releases it when the last view dies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/custom_node_state.h"
#include "core/tensor.h"

namespace ovmsx {

// One entry of getInputsInfo / getOutputsInfo.
struct TensorInfo {
  std::string name;
  std::string datatype;  // KServe name; "" for UNSPECIFIED
  Shape shape;           // -1 where the library said 0 ("any size")
};

// The result of a metadata call named `function` that returned `rc`, `info` and `count`.
// rc != 0 -> NODE_LIBRARY_METADATA_FAILED (nothing released); info NULL ->
// NODE_LIBRARY_OUTPUTS_CORRUPTED; count <= 0 -> NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT.
// Entries without a name are skipped. Every dims array, then the array, is released.
std::vector<TensorInfo> take_tensor_infos(const CustomNodeState& state, const char* function,
                                          int rc, CustomNodeTensorInfo* info, int count);

// The Tensors of an execute call that returned `rc`, `outputs` and `count`, in the library's
// order. rc != 0 -> NODE_LIBRARY_EXECUTION_FAILED (nothing released: the library cleans up);
// outputs NULL -> NODE_LIBRARY_OUTPUTS_CORRUPTED; count <= 0 -> release(outputs) and
// NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT. Every output is then visited, and the first error
// wins: NODE_LIBRARY_INVALID_PRECISION, NODE_LIBRARY_INVALID_CONTENT_SIZE (no data, or
// dataBytes other than product(dims) * element size), NODE_LIBRARY_OUTPUT_MISSING_NAME.
// Each dims is released right after its output is converted, data when its Tensor dies (at
// once on failure), and the outputs array last.
std::vector<std::shared_ptr<Tensor>> take_outputs(
    const std::shared_ptr<const CustomNodeState>& state, int rc, CustomNodeTensor* outputs,
    int count);

}  // namespace ovmsx
