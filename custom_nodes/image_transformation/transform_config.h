// The params of the image_transformation node, read and checked once, at initialize().
//
// Same names, defaults and meaning as OVMS's src/custom_nodes/image_transformation (see
// README.md here); unlike OVMS, which checks them on every request and skips a malformed value,
// a param that does not parse or is out of range fails initialize() and names the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "node_params.h"

namespace ovmsx::custom_nodes {

enum class ImageLayout { kNCHW, kNHWC };
enum class ColorOrder { kBGR, kRGB, kGRAY };

struct TransformConfig {
  ImageLayout original_layout = ImageLayout::kNHWC;  // original_image_layout (required)
  ImageLayout target_layout = ImageLayout::kNHWC;    // target_image_layout, default: original
  ColorOrder original_order = ColorOrder::kBGR;      // original_image_color_order
  ColorOrder target_order = ColorOrder::kBGR;        // target_image_color_order, default: original
  std::optional<std::uint64_t> target_height;        // target_image_height, unset: keep the input's
  std::optional<std::uint64_t> target_width;         // target_image_width, unset: keep the input's
  std::vector<float> mean_values;                    // subtracted per target channel first
  std::vector<float> scale_values;                   // then divided per target channel...
  std::optional<float> scale;                        // ...or by this, when scale_values is unset
  bool debug = false;

  static TransformConfig parse(const NodeParams& params);  // throws NodeError(kBadParams)

  std::uint64_t original_channels() const { return channels(original_order); }
  std::uint64_t target_channels() const { return channels(target_order); }
  static std::uint64_t channels(ColorOrder order) { return order == ColorOrder::kGRAY ? 1 : 3; }
  // Whether the output is the input, unchanged.
  bool is_identity() const {
    return original_layout == target_layout && original_order == target_order && !target_height &&
           !target_width && mean_values.empty() && scale_values.empty() && !scale;
  }
  // For the debug param: every setting in one line.
  std::string describe() const;
};

const char* to_string(ImageLayout layout);
const char* to_string(ColorOrder order);

}  // namespace ovmsx::custom_nodes
