#include "transform_config.h"

#include <sstream>
#include <string_view>

#include "node_status.h"

namespace ovmsx::custom_nodes {
namespace {

[[noreturn]] void bad_param(std::string_view key, const std::string& why) {
  throw NodeError(kBadParams, "param " + std::string(key) + " " + why);
}

std::optional<ImageLayout> layout_param(const NodeParams& params, std::string_view key) {
  const auto text = params.find(key);
  if (!text) {
    return std::nullopt;
  }
  if (*text == "NCHW") {
    return ImageLayout::kNCHW;
  }
  if (*text == "NHWC") {
    return ImageLayout::kNHWC;
  }
  bad_param(key, "must be NCHW or NHWC, not \"" + std::string(*text) + "\"");
}

std::optional<ColorOrder> color_param(const NodeParams& params, std::string_view key) {
  const auto text = params.find(key);
  if (!text) {
    return std::nullopt;
  }
  if (*text == "BGR") {
    return ColorOrder::kBGR;
  }
  if (*text == "RGB") {
    return ColorOrder::kRGB;
  }
  if (*text == "GRAY") {
    return ColorOrder::kGRAY;
  }
  bad_param(key, "must be BGR, RGB or GRAY, not \"" + std::string(*text) + "\"");
}

std::optional<std::uint64_t> size_param(const NodeParams& params, std::string_view key) {
  const auto value = params.get_int(key);
  if (!value) {
    return std::nullopt;
  }
  // OVMS documents -1 as "not specified"; it is accepted here with that meaning.
  if (*value == -1) {
    return std::nullopt;
  }
  constexpr std::int64_t kMaxSide = 1 << 16;
  if (*value <= 0 || *value > kMaxSide) {
    bad_param(key,
              "must be in [1, " + std::to_string(kMaxSide) + "], not " + std::to_string(*value));
  }
  return static_cast<std::uint64_t>(*value);
}

std::vector<float> per_channel_param(const NodeParams& params, std::string_view key,
                                     std::uint64_t channels) {
  std::vector<float> values = params.get_float_list(key).value_or(std::vector<float>{});
  if (!values.empty() && values.size() != channels) {
    bad_param(key, "needs one value per target channel (" + std::to_string(channels) + "), not " +
                       std::to_string(values.size()));
  }
  return values;
}

std::string list_to_string(const std::vector<float>& values) {
  std::ostringstream text;
  text << "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text << (i == 0 ? "" : ",") << values[i];
  }
  text << "]";
  return text.str();
}

}  // namespace

const char* to_string(ImageLayout layout) { return layout == ImageLayout::kNCHW ? "NCHW" : "NHWC"; }

const char* to_string(ColorOrder order) {
  switch (order) {
    case ColorOrder::kBGR:
      return "BGR";
    case ColorOrder::kRGB:
      return "RGB";
    case ColorOrder::kGRAY:
      return "GRAY";
  }
  return "?";
}

TransformConfig TransformConfig::parse(const NodeParams& params) {
  TransformConfig config;
  const auto original_layout = layout_param(params, "original_image_layout");
  if (!original_layout) {
    bad_param("original_image_layout", "is required (NCHW or NHWC)");
  }
  config.original_layout = *original_layout;
  config.target_layout = layout_param(params, "target_image_layout").value_or(*original_layout);
  config.original_order =
      color_param(params, "original_image_color_order").value_or(ColorOrder::kBGR);
  config.target_order =
      color_param(params, "target_image_color_order").value_or(config.original_order);
  config.target_height = size_param(params, "target_image_height");
  config.target_width = size_param(params, "target_image_width");

  config.mean_values = per_channel_param(params, "mean_values", config.target_channels());
  config.scale_values = per_channel_param(params, "scale_values", config.target_channels());
  for (const float value : config.scale_values) {
    if (value == 0) {
      bad_param("scale_values", "cannot divide by 0");
    }
  }
  config.scale = params.get_float("scale");
  if (config.scale && *config.scale == 0) {
    bad_param("scale", "cannot divide by 0");
  }
  config.debug = params.find("debug").value_or("false") == "true";
  return config;
}

std::string TransformConfig::describe() const {
  std::ostringstream text;
  text << "layout " << to_string(original_layout) << "->" << to_string(target_layout) << ", color "
       << to_string(original_order) << "->" << to_string(target_order) << ", size "
       << (target_height ? std::to_string(*target_height) : "H") << "x"
       << (target_width ? std::to_string(*target_width) : "W") << ", mean_values "
       << list_to_string(mean_values) << ", scale_values " << list_to_string(scale_values)
       << ", scale " << (scale ? std::to_string(*scale) : "not set");
  return text.str();
}

}  // namespace ovmsx::custom_nodes
