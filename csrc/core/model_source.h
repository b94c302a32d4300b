// A model as read from disk, before it is compiled: what the config's shape, layout and
// batch_size settings are applied to (COMPAT.md §5).
//
// ov::Model is not thread-safe to edit; a ModelSource is edited by one loader, then compiled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <openvino/core/model.hpp>
#include <openvino/runtime/compiled_model.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/model_info.h"

namespace ovmsx {

// One dimension as OpenVINO bounds it: a static d is {d, d}; a dynamic one {min, -1} or a
// range {a, b}.
struct DimBounds {
  std::int64_t min;
  std::int64_t max;  // -1: unbounded
};

// What a client sees of one input or output (KServe ModelMetadata) and what a request is
// validated against.
struct PortInfo {
  std::string name;      // the port's first name, as OVMS reports it
  std::string datatype;  // KServe datatype of the element type
  bool rank_dynamic = false;
  std::vector<DimBounds> dims;  // empty when rank_dynamic
  std::string layout;           // e.g. "NCHW"; empty when the model sets none
};

std::vector<PortInfo> describe_ports(const std::vector<ov::Output<const ov::Node>>& ports);

// Preprocessing built into the model for its single input, applied in this order whatever
// the order of the flags: color conversion, element type conversion, (x - mean), / scale.
struct InputSteps {
  using Values = std::variant<float, std::vector<float>>;    // all channels, or one per channel
  std::optional<std::pair<std::string, std::string>> color;  // {client's, model's}
  std::optional<std::pair<std::string, std::string>> element_types;  // {client's, model's}
  std::optional<Values> mean;
  std::optional<Values> scale;

  bool empty() const { return !color && !element_types && !mean && !scale; }
};

class ModelSource {
 public:
  // Reads any format OpenVINO reads (IR .xml with its .bin, .onnx, .tflite, .pdmodel, …).
  // Raises StatusError(FILE_INVALID) naming the file and OpenVINO's reason.
  static ModelSource read(const std::string& path);

  std::vector<PortInfo> inputs() const;
  std::vector<PortInfo> outputs() const;

  // rt_info["model_info"] of the model as it is now (core/model_info.h).
  std::optional<std::vector<ModelInfoEntry>> model_info() const {
    return ovmsx::model_info(*model_);
  }

  // Per-input layouts: {name: {tensor_layout, model_layout}}. The model layout is declared
  // on the model; a differing tensor layout adds the transposition (OVMS "NHWC:NCHW").
  // An unknown name raises CONFIG_LAYOUT_IS_NOT_IN_NETWORK, a bad layout LAYOUT_WRONG_FORMAT.
  // `steps` (the single-model preprocessing flags) go into the same PrePostProcessor, on the
  // model's only input: several inputs raise UNKNOWN_ERROR, a step OpenVINO refuses
  // MODEL_NOT_LOADED with its reason.
  void prepare_inputs(const std::map<std::string, std::pair<std::string, std::string>>& layouts,
                      const InputSteps& steps = {});

  // Per-input shapes: {name: dims}. Raises CONFIG_SHAPE_IS_NOT_IN_NETWORK for an unknown name
  // and RESHAPE_ERROR with OpenVINO's reason when the model cannot take the shape.
  void reshape(const std::map<std::string, std::vector<DimBounds>>& shapes);

  // Compiles for `device` with string properties (PERFORMANCE_HINT, NUM_STREAMS, CACHE_DIR…).
  // Raises CANNOT_LOAD_NETWORK_INTO_TARGET_DEVICE with OpenVINO's reason.
  ov::CompiledModel compile(const std::string& device,
                            const std::map<std::string, std::string>& properties) const;

 private:
  explicit ModelSource(std::shared_ptr<ov::Model> model) : model_(std::move(model)) {}
  std::shared_ptr<ov::Model> model_;
};

// The process-wide OpenVINO runtime. ov::Core is thread-safe; one instance shares plugins
// and their thread pools across all models.
ov::Core& openvino_core();

}  // namespace ovmsx
