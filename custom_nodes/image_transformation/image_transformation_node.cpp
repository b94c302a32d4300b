#include "image_transformation_node.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "node_status.h"

namespace ovmsx::custom_nodes {
namespace {

constexpr const char* kTensorName = "image";  // OVMS's name, for the input and the output
constexpr std::uint64_t kDimsCount = 4;

struct Free {
  void operator()(void* ptr) const { std::free(ptr); }
};
using Allocation = std::unique_ptr<void, Free>;

Allocation allocate(std::size_t bytes) {
  Allocation memory(std::malloc(bytes == 0 ? 1 : bytes));
  if (!memory) {
    throw NodeError(kOutOfMemory, "cannot allocate " + std::to_string(bytes) + " bytes");
  }
  return memory;
}

// [1, channels, height, width] or [1, height, width, channels]; 0 for "any size".
std::vector<std::uint64_t> dims_in(ImageLayout layout, std::uint64_t channels, std::uint64_t height,
                                   std::uint64_t width) {
  return layout == ImageLayout::kNCHW ? std::vector<std::uint64_t>{1, channels, height, width}
                                      : std::vector<std::uint64_t>{1, height, width, channels};
}

std::string shape_to_string(const std::uint64_t* dims, std::uint64_t count) {
  std::string text = "[";
  for (std::uint64_t i = 0; dims != nullptr && i < count; ++i) {
    text += (i == 0 ? "" : ",") + std::to_string(dims[i]);
  }
  return text + "]";
}

[[noreturn]] void bad_input(const std::string& why) {
  throw NodeError(kBadInputs, std::string("input ") + kTensorName + " " + why);
}

const struct CustomNodeTensor& find_input(const struct CustomNodeTensor* inputs, int count) {
  // The server's input order is unspecified (COMPAT.md §1.3): look the input up by name.
  for (int i = 0; i < count; ++i) {
    if (inputs[i].name != nullptr && std::strcmp(inputs[i].name, kTensorName) == 0) {
      return inputs[i];
    }
  }
  bad_input("is missing");
}

struct ImageSize {
  std::uint64_t height;
  std::uint64_t width;
};

ImageSize check_input(const TransformConfig& config, const struct CustomNodeTensor& input) {
  if (input.precision != FP32) {
    bad_input("must be FP32");
  }
  const std::string shape = shape_to_string(input.dims, input.dimsCount);
  if (input.dims == nullptr || input.dimsCount != kDimsCount || input.dims[0] != 1) {
    bad_input("has shape " + shape + ", expected [1,C,H,W] or [1,H,W,C] (batch 1)");
  }
  const bool nchw = config.original_layout == ImageLayout::kNCHW;
  const std::uint64_t channels = nchw ? input.dims[1] : input.dims[3];
  const ImageSize size{nchw ? input.dims[2] : input.dims[1], nchw ? input.dims[3] : input.dims[2]};
  if (channels != config.original_channels()) {
    bad_input("has shape " + shape + ": " + to_string(config.original_layout) + " " +
              to_string(config.original_order) + " needs " +
              std::to_string(config.original_channels()) + " channels");
  }
  if (size.height == 0 || size.width == 0) {
    bad_input("has shape " + shape + ": height and width must be positive");
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(size.height, size.width, &bytes) ||
      __builtin_mul_overflow(bytes, channels * sizeof(float), &bytes) || bytes != input.dataBytes ||
      input.data == nullptr) {
    bad_input("has shape " + shape + " but holds " + std::to_string(input.dataBytes) + " bytes");
  }
  return size;
}

void fill_info(const char* name, const std::vector<std::uint64_t>& dims,
               struct CustomNodeTensorInfo** info, int* info_count) {
  Allocation array = allocate(sizeof(struct CustomNodeTensorInfo));
  Allocation dims_copy = allocate(dims.size() * sizeof(std::uint64_t));
  std::memcpy(dims_copy.get(), dims.data(), dims.size() * sizeof(std::uint64_t));
  auto* entry = static_cast<struct CustomNodeTensorInfo*>(array.get());
  entry->name = name;
  entry->dims = static_cast<std::uint64_t*>(dims_copy.release());
  entry->dimsCount = dims.size();
  entry->precision = FP32;
  *info = static_cast<struct CustomNodeTensorInfo*>(array.release());
  *info_count = 1;
}

}  // namespace

ImageTransformationNode::ImageTransformationNode(const TransformConfig& config)
    : config_(config), model_(config) {}

void ImageTransformationNode::execute(const struct CustomNodeTensor* inputs, int inputs_count,
                                      struct CustomNodeTensor** outputs, int* outputs_count) {
  const struct CustomNodeTensor& input = find_input(inputs, inputs_count);
  const ImageSize in = check_input(config_, input);
  const std::vector<std::uint64_t> input_dims(input.dims, input.dims + kDimsCount);
  const std::vector<std::uint64_t> output_dims =
      dims_in(config_.target_layout, config_.target_channels(),
              config_.target_height.value_or(in.height), config_.target_width.value_or(in.width));
  std::uint64_t output_bytes = sizeof(float);
  for (const std::uint64_t dim : output_dims) {
    if (__builtin_mul_overflow(output_bytes, dim, &output_bytes)) {
      bad_input("is too large: " + shape_to_string(output_dims.data(), kDimsCount) + " overflows");
    }
  }
  if (config_.debug) {
    std::cout << "[image_transformation custom node] " << shape_to_string(input.dims, kDimsCount)
              << " -> " << shape_to_string(output_dims.data(), kDimsCount) << std::endl;
  }

  Allocation array = allocate(sizeof(struct CustomNodeTensor));
  Allocation data = allocate(output_bytes);
  Allocation dims = allocate(kDimsCount * sizeof(std::uint64_t));
  model_.run(reinterpret_cast<const float*>(input.data), input_dims,
             static_cast<float*>(data.get()), output_dims);
  std::memcpy(dims.get(), output_dims.data(), kDimsCount * sizeof(std::uint64_t));

  auto* output = static_cast<struct CustomNodeTensor*>(array.get());
  output->name = kTensorName;
  output->data = static_cast<std::uint8_t*>(data.release());
  output->dataBytes = output_bytes;
  output->dims = static_cast<std::uint64_t*>(dims.release());
  output->dimsCount = kDimsCount;
  output->precision = FP32;
  *outputs = static_cast<struct CustomNodeTensor*>(array.release());
  *outputs_count = 1;
}

void ImageTransformationNode::inputs_info(const TransformConfig& config,
                                          struct CustomNodeTensorInfo** info, int* info_count) {
  fill_info(kTensorName, dims_in(config.original_layout, config.original_channels(), 0, 0), info,
            info_count);
}

void ImageTransformationNode::outputs_info(const TransformConfig& config,
                                           struct CustomNodeTensorInfo** info, int* info_count) {
  fill_info(kTensorName,
            dims_in(config.target_layout, config.target_channels(),
                    config.target_height.value_or(0), config.target_width.value_or(0)),
            info, info_count);
}

}  // namespace ovmsx::custom_nodes
