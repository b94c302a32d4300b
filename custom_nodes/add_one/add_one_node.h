// The add_one built-in node, with the contract of OVMS's src/custom_nodes/add_one:
// FP32 input "input_numbers" [1,10] -> FP32 output "output_numbers" [1,10], each number
// + add_number - sub_number. Every buffer it hands out comes from a BufferPool sized by the
// output_queue_size and info_queue_size params, which exists to show (and test) the
// initialize/deinitialize memory-pool pattern of the custom-node ABI.
#pragma once

#include <cstddef>
#include <cstdint>

#include "buffer_pool.h"
#include "custom_node_interface.h"
#include "node_params.h"

namespace ovmsx::custom_nodes {

class AddOneNode {
 public:
  static constexpr std::uint64_t kNumbers = 10;  // OVMS's node is fixed at [1,10]

  // Reads and checks the params (throws NodeError(kBadParams)) and preallocates the pool.
  explicit AddOneNode(const NodeParams& params);

  // The ABI's execute: on any failure it throws and has handed out nothing.
  void execute(const struct CustomNodeTensor* inputs, int inputs_count,
               struct CustomNodeTensor** outputs, int* outputs_count);
  // The ABI's getInputsInfo / getOutputsInfo.
  void inputs_info(struct CustomNodeTensorInfo** info, int* info_count);
  void outputs_info(struct CustomNodeTensorInfo** info, int* info_count);

  BufferPool& pool() noexcept { return pool_; }

 private:
  void tensor_info(const char* name, struct CustomNodeTensorInfo** info, int* info_count);

  float add_number_ = 1;
  float sub_number_ = 0;
  BufferPool pool_;
  std::size_t outputs_queue_ = 0;
  std::size_t data_queue_ = 0;
  std::size_t dims_queue_ = 0;
  std::size_t infos_queue_ = 0;
  std::size_t info_dims_queue_ = 0;
};

}  // namespace ovmsx::custom_nodes
