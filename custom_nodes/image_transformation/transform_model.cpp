#include "transform_model.h"

#include <cstring>
#include <memory>
#include <openvino/core/model.hpp>
#include <openvino/core/preprocess/pre_post_process.hpp>
#include <openvino/op/concat.hpp>
#include <openvino/op/constant.hpp>
#include <openvino/op/interpolate.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/result.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/properties.hpp>
#include <openvino/runtime/tensor.hpp>
#include <optional>
#include <utility>

namespace ovmsx::custom_nodes {
namespace {

namespace pp = ov::preprocess;

struct Axes {
  std::int64_t channels;
  std::int64_t height;
  std::int64_t width;
};

Axes axes_of(ImageLayout layout) {
  return layout == ImageLayout::kNCHW ? Axes{1, 2, 3} : Axes{3, 1, 2};
}

ov::Layout ov_layout(ImageLayout layout) { return ov::Layout(to_string(layout)); }

pp::ColorFormat ov_color(ColorOrder order) {
  switch (order) {
    case ColorOrder::kBGR:
      return pp::ColorFormat::BGR;
    case ColorOrder::kRGB:
      return pp::ColorFormat::RGB;
    case ColorOrder::kGRAY:
      return pp::ColorFormat::GRAY;
  }
  return pp::ColorFormat::UNDEFINED;
}

// A 4-D shape in `layout`, with -1 (dynamic) for an unknown side.
ov::PartialShape image_shape(ImageLayout layout, std::uint64_t channels,
                             std::optional<std::uint64_t> height,
                             std::optional<std::uint64_t> width) {
  const auto side = [](std::optional<std::uint64_t> size) {
    return size ? ov::Dimension(static_cast<std::int64_t>(*size)) : ov::Dimension::dynamic();
  };
  const auto c = ov::Dimension(static_cast<std::int64_t>(channels));
  return layout == ImageLayout::kNCHW ? ov::PartialShape{1, c, side(height), side(width)}
                                      : ov::PartialShape{1, side(height), side(width), c};
}

// Resizes one spatial axis only, for a config that fixes just one of height and width: the
// PrePostProcessor's resize() needs both. Same attributes as its RESIZE_LINEAR.
pp::PreProcessSteps::CustomPreprocessOp resize_axis(std::int64_t axis, std::uint64_t size) {
  return [axis, size](const ov::Output<ov::Node>& image) {
    ov::op::util::InterpolateBase::InterpolateAttrs attrs;
    attrs.mode = ov::op::util::InterpolateBase::InterpolateMode::LINEAR;
    attrs.shape_calculation_mode = ov::op::util::InterpolateBase::ShapeCalcMode::SIZES;
    attrs.coordinate_transformation_mode =
        ov::op::util::InterpolateBase::CoordinateTransformMode::HALF_PIXEL;
    attrs.antialias = false;
    const auto sizes =
        ov::op::v0::Constant::create(ov::element::i64, {1}, {static_cast<std::int64_t>(size)});
    const auto axes = ov::op::v0::Constant::create(ov::element::i64, {1}, {axis});
    return std::make_shared<ov::op::v11::Interpolate>(image, sizes, axes, attrs)->output(0);
  };
}

// GRAY -> BGR/RGB, which the PrePostProcessor's convert_color() lacks: the one channel, thrice.
pp::PreProcessSteps::CustomPreprocessOp replicate_channel(std::int64_t axis) {
  return [axis](const ov::Output<ov::Node>& image) {
    return std::make_shared<ov::op::v0::Concat>(ov::OutputVector{image, image, image}, axis)
        ->output(0);
  };
}

std::shared_ptr<ov::Model> build_model(const TransformConfig& config) {
  const auto parameter = std::make_shared<ov::op::v0::Parameter>(
      ov::element::f32, image_shape(config.target_layout, config.target_channels(),
                                    config.target_height, config.target_width));
  const auto model =
      std::make_shared<ov::Model>(ov::ResultVector{std::make_shared<ov::op::v0::Result>(parameter)},
                                  ov::ParameterVector{parameter});

  const bool gray_to_color =
      config.original_order == ColorOrder::kGRAY && config.target_order != ColorOrder::kGRAY;
  const Axes original_axes = axes_of(config.original_layout);

  pp::PrePostProcessor ppp(model);
  pp::InputInfo& input = ppp.input();
  input.tensor()
      .set_element_type(ov::element::f32)
      .set_layout(ov_layout(config.original_layout))
      .set_shape(image_shape(config.original_layout, config.original_channels(), std::nullopt,
                             std::nullopt));
  input.model().set_layout(ov_layout(config.target_layout));
  pp::PreProcessSteps& steps = input.preprocess();
  // Custom steps see the image in the original layout: the PrePostProcessor converts the
  // layout last, after all explicit steps.
  if (!gray_to_color) {
    input.tensor().set_color_format(ov_color(config.original_order));
    if (config.original_order != config.target_order) {
      steps.convert_color(ov_color(config.target_order));
    }
  }
  if (config.target_height && config.target_width) {
    steps.resize(pp::ResizeAlgorithm::RESIZE_LINEAR);
  } else if (config.target_height) {
    steps.custom(resize_axis(original_axes.height, *config.target_height));
  } else if (config.target_width) {
    steps.custom(resize_axis(original_axes.width, *config.target_width));
  }
  if (gray_to_color) {
    steps.custom(replicate_channel(original_axes.channels));
  }
  if (!config.mean_values.empty()) {
    steps.mean(config.mean_values);
  }
  if (!config.scale_values.empty()) {
    steps.scale(config.scale_values);
  } else if (config.scale) {
    steps.scale(*config.scale);
  }
  return ppp.build();
}

// One Core for the library, never destroyed: tearing OpenVINO's plugins down from a static
// destructor at process exit races with the server's own OpenVINO objects.
ov::Core& core() {
  static auto* instance = new ov::Core();
  return *instance;
}

ov::Shape to_ov_shape(const std::vector<std::uint64_t>& dims) {
  return ov::Shape(dims.begin(), dims.end());
}

}  // namespace

TransformModel::TransformModel(const TransformConfig& config) : identity_(config.is_identity()) {
  if (identity_) {
    return;
  }
  compiled_ = core().compile_model(
      build_model(config), "CPU",
      // f32 on every CPU: the plugin would otherwise pick bf16 where the CPU has it.
      ov::hint::inference_precision(ov::element::f32),
      ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
      // The node runs next to the pipeline's models; leave the cores to their streams.
      ov::hint::enable_cpu_pinning(false));
  idle_.push_back(compiled_.create_infer_request());
}

ov::InferRequest TransformModel::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      ov::InferRequest request = std::move(idle_.back());
      idle_.pop_back();
      return request;
    }
  }
  return compiled_.create_infer_request();
}

void TransformModel::run(const float* input, const std::vector<std::uint64_t>& input_shape,
                         float* output, const std::vector<std::uint64_t>& output_shape) {
  if (identity_) {
    std::memcpy(output, input, ov::shape_size(to_ov_shape(input_shape)) * sizeof(float));
    return;
  }
  ov::InferRequest request = acquire();
  // Read-only: the input is the server's memory, which the ABI forbids changing.
  request.set_input_tensor(
      ov::Tensor(ov::element::f32, to_ov_shape(input_shape), static_cast<const void*>(input)));
  request.set_output_tensor(ov::Tensor(ov::element::f32, to_ov_shape(output_shape), output));
  request.infer();  // on an exception the request is dropped, not reused
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(request));
}

}  // namespace ovmsx::custom_nodes
