// The image maths of the image_transformation node, done by OpenVINO rather than by hand.
//
// The model is only Parameter -> Result; ov::preprocess::PrePostProcessor gives it the node's
// steps, in this order: color order conversion, linear resize, mean subtraction, scale
// division, layout conversion. The input's height and width are dynamic, so one compiled model
// serves images of any size; each run() wraps the caller's input and output memory in
// ov::Tensors (no copies) on an infer request of its own.
//
// A config with nothing to do is a plain copy, without OpenVINO: the CPU plugin mishandles a
// bare Parameter -> Result whose input and output tensors are both caller memory (OpenVINO
// 2026.4.1 wrote into the input, even one wrapped read-only, and left the output unset).
//
// Resize is bilinear with half-pixel centres and no antialiasing: OpenCV's INTER_LINEAR, which
// OVMS's node uses. Mean and scale are applied after resizing, which gives the same result as
// OVMS's "before resize when enlarging" up to float rounding: both are per-channel affine maps,
// and linear interpolation weights sum to 1.
#pragma once

#include <cstdint>
#include <mutex>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>
#include <vector>

#include "transform_config.h"

namespace ovmsx::custom_nodes {

class TransformModel {
 public:
  // Builds and compiles the model on CPU (throws ov::Exception on failure).
  explicit TransformModel(const TransformConfig& config);

  // Transforms one image. `input_shape` is [1,C,H,W] or [1,H,W,C] in the original layout and
  // `output_shape` the matching shape in the target layout; both buffers are FP32 and owned by
  // the caller. Thread-safe: concurrent calls run on separate infer requests.
  void run(const float* input, const std::vector<std::uint64_t>& input_shape, float* output,
           const std::vector<std::uint64_t>& output_shape);

 private:
  ov::InferRequest acquire();

  bool identity_;
  ov::CompiledModel compiled_;  // empty when identity_
  std::mutex mutex_;
  std::vector<ov::InferRequest> idle_;  // grows to the highest number of concurrent run()s
};

}  // namespace ovmsx::custom_nodes
