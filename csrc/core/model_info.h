// The "model_info" section of a model's runtime info (rt_info), which OVMS shows in its REST
// model metadata: labels, thresholds, model type and the like, set by whoever saved the model.
#pragma once

#include <openvino/core/model.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ovmsx {

// One entry of the section, flattened: the keys leading to it, and either a nested map (whose
// entries follow it) or a value as text. Entries come in key order, each map before its
// entries, so the nesting can be rebuilt in one pass.
struct ModelInfoEntry {
  std::vector<std::string> path;
  bool is_map = false;
  std::string value;  // empty for a map
};

// The entries of rt_info["model_info"]; nullopt when the model has no such section or it is
// not a map. A value is given as OpenVINO prints it (ov::Any::as<std::string>); one that cannot
// be printed is given as "Error converting value", as OVMS does.
std::optional<std::vector<ModelInfoEntry>> model_info(const ov::Model& model);

}  // namespace ovmsx
