#include "core/model_source.h"

#include <openvino/core/preprocess/pre_post_process.hpp>
#include <openvino/runtime/core.hpp>

#include "core/ov_element.h"
#include "core/status.h"

namespace ovmsx {
namespace {

// OpenVINO's exception text often ends in line breaks that would split a log line.
std::string reason_of(const std::exception& error) {
  std::string text = error.what();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

ov::Dimension dimension_of(const DimBounds& dim) {
  if (dim.min == dim.max) {
    return ov::Dimension(dim.min);
  }
  return ov::Dimension(dim.min, dim.max);
}

bool has_input(const ov::Model& model, const std::string& name) {
  for (const auto& input : model.inputs()) {
    if (input.get_names().count(name) != 0) {
      return true;
    }
  }
  return false;
}

// The color formats of --color_format, by OVMS's names.
ov::preprocess::ColorFormat color_format_of(const std::string& name) {
  using ov::preprocess::ColorFormat;
  static const std::map<std::string, ColorFormat> formats = {
      {"RGB", ColorFormat::RGB},
      {"BGR", ColorFormat::BGR},
      {"GRAY", ColorFormat::GRAY},
      {"NV12", ColorFormat::NV12_SINGLE_PLANE},
      {"NV12_2", ColorFormat::NV12_TWO_PLANES},
      {"I420", ColorFormat::I420_SINGLE_PLANE},
      {"I420_3", ColorFormat::I420_THREE_PLANES},
  };
  auto found = formats.find(name);
  if (found == formats.end()) {
    throw StatusError(StatusCode::COLOR_FORMAT_WRONG_FORMAT, "unknown color format " + name);
  }
  return found->second;
}

void add_steps(ov::preprocess::InputInfo& input, const InputSteps& steps) {
  auto& preprocess = input.preprocess();
  if (steps.color) {
    // Planes become inputs of their own; without sub-names they would have no tensor names
    // for a client to address, so they are named "<input>/y", "<input>/uv" (or /u and /v).
    const auto client = color_format_of(steps.color->first);
    std::vector<std::string> planes;
    if (client == ov::preprocess::ColorFormat::NV12_TWO_PLANES) {
      planes = {"y", "uv"};
    } else if (client == ov::preprocess::ColorFormat::I420_THREE_PLANES) {
      planes = {"y", "u", "v"};
    }
    input.tensor().set_color_format(client, planes);
    preprocess.convert_color(color_format_of(steps.color->second));
  }
  if (steps.element_types) {
    input.tensor().set_element_type(ov::element::Type(steps.element_types->first));
    preprocess.convert_element_type(ov::element::Type(steps.element_types->second));
  }
  if (steps.mean) {
    std::visit([&](const auto& values) { preprocess.mean(values); }, *steps.mean);
  }
  if (steps.scale) {
    std::visit([&](const auto& values) { preprocess.scale(values); }, *steps.scale);
  }
}

}  // namespace

ov::Core& openvino_core() {
  static ov::Core core;
  return core;
}

std::vector<PortInfo> describe_ports(const std::vector<ov::Output<const ov::Node>>& ports) {
  std::vector<PortInfo> out;
  out.reserve(ports.size());
  for (const auto& port : ports) {
    PortInfo info;
    const auto& names = port.get_names();
    // A port without tensor names is known by its node (OpenVINO does the same in errors).
    info.name = names.empty() ? port.get_node()->get_friendly_name() : port.get_any_name();
    info.datatype = datatype_of_element(port.get_element_type());
    const ov::PartialShape& shape = port.get_partial_shape();
    info.rank_dynamic = shape.rank().is_dynamic();
    if (!info.rank_dynamic) {
      for (const auto& dim : shape) {
        info.dims.push_back({dim.get_min_length(), dim.get_max_length()});
      }
    }
    const auto& rt_info = port.get_rt_info();
    auto layout = rt_info.find(ov::LayoutAttribute::get_type_info_static());
    if (layout != rt_info.end()) {
      info.layout = layout->second.as<ov::LayoutAttribute>().value.to_string();
    }
    out.push_back(std::move(info));
  }
  return out;
}

ModelSource ModelSource::read(const std::string& path) {
  try {
    return ModelSource(openvino_core().read_model(path));
  } catch (const std::exception& error) {
    throw StatusError(StatusCode::FILE_INVALID, path + ": " + reason_of(error));
  }
}

std::vector<PortInfo> ModelSource::inputs() const {
  std::shared_ptr<const ov::Model> model = model_;
  return describe_ports(model->inputs());
}

std::vector<PortInfo> ModelSource::outputs() const {
  std::shared_ptr<const ov::Model> model = model_;
  return describe_ports(model->outputs());
}

void ModelSource::prepare_inputs(
    const std::map<std::string, std::pair<std::string, std::string>>& layouts,
    const InputSteps& steps) {
  if (layouts.empty() && steps.empty()) {
    return;
  }
  if (!steps.empty() && model_->inputs().size() != 1) {
    throw StatusError(StatusCode::UNKNOWN_ERROR,
                      "the model has " + std::to_string(model_->inputs().size()) +
                          " inputs; --mean, --scale, --color_format and --precision apply to a "
                          "model of one input");
  }
  ov::preprocess::PrePostProcessor ppp(model_);
  for (const auto& [name, pair] : layouts) {
    if (!has_input(*model_, name)) {
      throw StatusError(StatusCode::CONFIG_LAYOUT_IS_NOT_IN_NETWORK, "input name: " + name);
    }
    try {
      auto& input = ppp.input(name);
      const auto& [tensor_layout, model_layout] = pair;
      if (!model_layout.empty()) {
        input.model().set_layout(ov::Layout(model_layout));
      }
      if (!tensor_layout.empty()) {
        input.tensor().set_layout(ov::Layout(tensor_layout));
      }
    } catch (const std::exception& error) {
      throw StatusError(StatusCode::LAYOUT_WRONG_FORMAT,
                        "input name: " + name + "; " + reason_of(error));
    }
  }
  if (!steps.empty()) {
    try {
      add_steps(ppp.input(), steps);
    } catch (const StatusError&) {
      throw;
    } catch (const std::exception& error) {
      throw StatusError(StatusCode::MODEL_NOT_LOADED,
                        "cannot apply preprocessing: " + reason_of(error));
    }
  }
  try {
    model_ = ppp.build();
  } catch (const std::exception& error) {
    // With preprocessing steps either part may be the cause; OVMS reports both this way.
    if (steps.empty()) {
      throw StatusError(StatusCode::LAYOUT_WRONG_FORMAT, reason_of(error));
    }
    throw StatusError(StatusCode::MODEL_NOT_LOADED,
                      "cannot apply layout or preprocessing: " + reason_of(error));
  }
}

void ModelSource::reshape(const std::map<std::string, std::vector<DimBounds>>& shapes) {
  if (shapes.empty()) {
    return;
  }
  std::map<std::string, ov::PartialShape> targets;
  for (const auto& [name, dims] : shapes) {
    if (!has_input(*model_, name)) {
      throw StatusError(StatusCode::CONFIG_SHAPE_IS_NOT_IN_NETWORK, "input name: " + name);
    }
    std::vector<ov::Dimension> target;
    for (const auto& dim : dims) {
      target.push_back(dimension_of(dim));
    }
    targets.emplace(name, ov::PartialShape(target));
  }
  try {
    model_->reshape(targets);
  } catch (const std::exception& error) {
    throw StatusError(StatusCode::RESHAPE_ERROR, reason_of(error));
  }
}

ov::CompiledModel ModelSource::compile(const std::string& device,
                                       const std::map<std::string, std::string>& properties) const {
  ov::AnyMap config;
  for (const auto& [key, value] : properties) {
    config.emplace(key, value);
  }
  try {
    return openvino_core().compile_model(model_, device, config);
  } catch (const std::exception& error) {
    throw StatusError(StatusCode::CANNOT_LOAD_NETWORK_INTO_TARGET_DEVICE,
                      device + ": " + reason_of(error));
  }
}

}  // namespace ovmsx
