#include "add_one_node.h"

#include <cstring>
#include <memory>
#include <string>

#include "node_status.h"

namespace ovmsx::custom_nodes {
namespace {

constexpr const char* kInputName = "input_numbers";
constexpr const char* kOutputName = "output_numbers";
constexpr std::uint64_t kDimsCount = 2;
constexpr std::uint64_t kDataBytes = AddOneNode::kNumbers * sizeof(float);

// The sum is computed in FP32, which holds every integer up to 2^24 exactly.
constexpr std::int64_t kMaxAddend = 1 << 24;

std::int64_t int_param(const NodeParams& params, const char* key, std::int64_t fallback,
                       std::int64_t min, std::int64_t max) {
  const std::int64_t value = params.get_int(key).value_or(fallback);
  if (value < min || value > max) {
    throw NodeError(kBadParams, std::string("param ") + key + "=" + std::to_string(value) +
                                    " is out of range [" + std::to_string(min) + ", " +
                                    std::to_string(max) + "]");
  }
  return value;
}

// A buffer taken from the pool and not yet handed to the server: given back if execute fails
// half-way, because the server releases nothing after a non-zero return (COMPAT.md §1.3).
struct GiveBackToPool {
  BufferPool* pool;
  void operator()(void* ptr) const { pool->give_back(ptr); }
};
using PendingBuffer = std::unique_ptr<void, GiveBackToPool>;

PendingBuffer take(BufferPool& pool, std::size_t queue, std::size_t bytes) {
  PendingBuffer buffer(pool.take(queue, bytes), GiveBackToPool{&pool});
  if (!buffer) {
    throw NodeError(kOutOfMemory,
                    "cannot allocate an output buffer of " + std::to_string(bytes) + " bytes");
  }
  return buffer;
}

const struct CustomNodeTensor& find_input(const struct CustomNodeTensor* inputs, int count) {
  // The server's input order is unspecified (COMPAT.md §1.3): look the input up by name.
  for (int i = 0; i < count; ++i) {
    if (inputs[i].name != nullptr && std::strcmp(inputs[i].name, kInputName) == 0) {
      return inputs[i];
    }
  }
  throw NodeError(kBadInputs, std::string("input ") + kInputName + " is missing");
}

void check_input(const struct CustomNodeTensor& input) {
  if (input.precision != FP32) {
    throw NodeError(kBadInputs, std::string("input ") + kInputName + " must be FP32");
  }
  if (input.dimsCount != kDimsCount || input.dims == nullptr || input.dims[0] != 1 ||
      input.dims[1] != AddOneNode::kNumbers) {
    std::string shape = "[";
    for (std::uint64_t i = 0; input.dims != nullptr && i < input.dimsCount; ++i) {
      shape += (i == 0 ? "" : ",") + std::to_string(input.dims[i]);
    }
    throw NodeError(kBadInputs, std::string("input ") + kInputName + " has shape " + shape +
                                    "], expected [1," + std::to_string(AddOneNode::kNumbers) + "]");
  }
  if (input.dataBytes != kDataBytes || input.data == nullptr) {
    throw NodeError(kBadInputs, std::string("input ") + kInputName + " holds " +
                                    std::to_string(input.dataBytes) + " bytes, expected " +
                                    std::to_string(kDataBytes));
  }
}

}  // namespace

AddOneNode::AddOneNode(const NodeParams& params) {
  add_number_ = static_cast<float>(int_param(params, "add_number", 1, -kMaxAddend, kMaxAddend));
  sub_number_ = static_cast<float>(int_param(params, "sub_number", 0, -kMaxAddend, kMaxAddend));
  constexpr std::int64_t kMaxQueue = 1 << 20;
  const auto outputs =
      static_cast<std::size_t>(int_param(params, "output_queue_size", 10, 1, kMaxQueue));
  const auto infos =
      static_cast<std::size_t>(int_param(params, "info_queue_size", 10, 1, kMaxQueue));

  outputs_queue_ = pool_.add_queue(sizeof(struct CustomNodeTensor), outputs);
  data_queue_ = pool_.add_queue(kDataBytes, outputs);
  dims_queue_ = pool_.add_queue(kDimsCount * sizeof(std::uint64_t), outputs);
  infos_queue_ = pool_.add_queue(sizeof(struct CustomNodeTensorInfo), infos);
  info_dims_queue_ = pool_.add_queue(kDimsCount * sizeof(std::uint64_t), infos);
}

void AddOneNode::execute(const struct CustomNodeTensor* inputs, int inputs_count,
                         struct CustomNodeTensor** outputs, int* outputs_count) {
  const struct CustomNodeTensor& input = find_input(inputs, inputs_count);
  check_input(input);

  PendingBuffer array = take(pool_, outputs_queue_, sizeof(struct CustomNodeTensor));
  PendingBuffer data = take(pool_, data_queue_, kDataBytes);
  PendingBuffer dims = take(pool_, dims_queue_, kDimsCount * sizeof(std::uint64_t));

  const auto* in = reinterpret_cast<const float*>(input.data);
  auto* out = static_cast<float*>(data.get());
  for (std::uint64_t i = 0; i < kNumbers; ++i) {
    out[i] = in[i] + add_number_ - sub_number_;
  }
  auto* shape = static_cast<std::uint64_t*>(dims.get());
  shape[0] = 1;
  shape[1] = kNumbers;

  auto* output = static_cast<struct CustomNodeTensor*>(array.get());
  output->name = kOutputName;
  output->data = static_cast<std::uint8_t*>(data.release());
  output->dataBytes = kDataBytes;
  output->dims = static_cast<std::uint64_t*>(dims.release());
  output->dimsCount = kDimsCount;
  output->precision = FP32;
  *outputs = static_cast<struct CustomNodeTensor*>(array.release());
  *outputs_count = 1;
}

void AddOneNode::inputs_info(struct CustomNodeTensorInfo** info, int* info_count) {
  tensor_info(kInputName, info, info_count);
}

void AddOneNode::outputs_info(struct CustomNodeTensorInfo** info, int* info_count) {
  tensor_info(kOutputName, info, info_count);
}

void AddOneNode::tensor_info(const char* name, struct CustomNodeTensorInfo** info,
                             int* info_count) {
  PendingBuffer array = take(pool_, infos_queue_, sizeof(struct CustomNodeTensorInfo));
  PendingBuffer dims = take(pool_, info_dims_queue_, kDimsCount * sizeof(std::uint64_t));
  auto* shape = static_cast<std::uint64_t*>(dims.get());
  shape[0] = 1;
  shape[1] = kNumbers;
  auto* entry = static_cast<struct CustomNodeTensorInfo*>(array.get());
  entry->name = name;
  entry->dims = static_cast<std::uint64_t*>(dims.release());
  entry->dimsCount = kDimsCount;
  entry->precision = FP32;
  *info = static_cast<struct CustomNodeTensorInfo*>(array.release());
  *info_count = 1;
}

}  // namespace ovmsx::custom_nodes
