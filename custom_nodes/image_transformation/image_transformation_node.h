// The image_transformation built-in node, with the contract of OVMS's
// src/custom_nodes/image_transformation: one FP32 input "image", [1,C,H,W] or [1,H,W,C], of any
// height and width -> one FP32 output "image", transformed as the params say (README.md here).
#pragma once

#include <cstdint>
#include <vector>

#include "custom_node_interface.h"
#include "transform_config.h"
#include "transform_model.h"

namespace ovmsx::custom_nodes {

class ImageTransformationNode {
 public:
  // Compiles the OpenVINO model for `config` (throws ov::Exception on failure).
  explicit ImageTransformationNode(const TransformConfig& config);

  // The ABI's execute: on any failure it throws and has allocated nothing. Output memory comes
  // from malloc(); release() frees it.
  void execute(const struct CustomNodeTensor* inputs, int inputs_count,
               struct CustomNodeTensor** outputs, int* outputs_count);

  // The ABI's getInputsInfo / getOutputsInfo, which need only the params, not a node: 0 marks
  // a side whose size is only known per request.
  static void inputs_info(const TransformConfig& config, struct CustomNodeTensorInfo** info,
                          int* info_count);
  static void outputs_info(const TransformConfig& config, struct CustomNodeTensorInfo** info,
                           int* info_count);

  const TransformConfig& config() const noexcept { return config_; }

 private:
  TransformConfig config_;
  TransformModel model_;
};

}  // namespace ovmsx::custom_nodes
