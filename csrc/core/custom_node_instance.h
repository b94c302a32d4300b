// One custom node of a pipeline: an initialized library with that node's params
// (COMPAT.md §1.3), as the pipeline calls it.
//
// Threading: every method may be called from any thread, concurrently; none of them needs
// the GIL, and execute is meant to run without it. close() retires the node: it drops the
// node's reference to its CustomNodeState, so deinitialize runs once the calls in flight
// have returned and the last output Tensor has died. After close() every call but close()
// throws StatusError NODE_LIBRARY_MISSING.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/custom_node_results.h"
#include "core/custom_node_state.h"
#include "core/tensor.h"

namespace ovmsx {

class CustomNode {
 public:
  // initialize(&manager /* NULL */, params); NODE_LIBRARY_INITIALIZE_FAILED on a non-zero return.
  CustomNode(std::shared_ptr<const CustomNodeLibrary> library, CustomNodeParams params);

  // getInputsInfo / getOutputsInfo with the node's params (see take_tensor_infos).
  std::vector<TensorInfo> inputs_info() const;
  std::vector<TensorInfo> outputs_info() const;

  // execute on views of `inputs` (name, data, dims and byte size are the Tensors'; the
  // precision follows the datatype, UNSPECIFIED when the C enum has none), then take_outputs.
  // The inputs are only read, and must stay alive for the call.
  std::vector<std::shared_ptr<Tensor>> execute(
      const std::vector<std::shared_ptr<Tensor>>& inputs) const;

  // Idempotent.
  void close();

 private:
  std::shared_ptr<const CustomNodeState> state() const;

  mutable std::mutex mutex_;  // guards state_ against a concurrent close()
  std::shared_ptr<const CustomNodeState> state_;
  std::string path_;  // for errors after close()
};

}  // namespace ovmsx
