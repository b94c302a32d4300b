#include "core/model_info.h"

#include <openvino/core/any.hpp>

namespace ovmsx {
namespace {

constexpr const char* kSection = "model_info";
constexpr const char* kUnprintable = "Error converting value";

void flatten(const ov::AnyMap& map, std::vector<std::string>& path,
             std::vector<ModelInfoEntry>& out) {
  for (const auto& [key, value] : map) {  // an AnyMap is a std::map: key order
    path.push_back(key);
    if (value.is<ov::AnyMap>()) {
      out.push_back({path, true, {}});
      flatten(value.as<ov::AnyMap>(), path, out);
    } else {
      std::string text;
      try {
        text = value.as<std::string>();
      } catch (const std::exception&) {
        text = kUnprintable;
      }
      out.push_back({path, false, std::move(text)});
    }
    path.pop_back();
  }
}

}  // namespace

std::optional<std::vector<ModelInfoEntry>> model_info(const ov::Model& model) {
  // Through get_rt_info<AnyMap>, as OVMS reads it: a section read from an IR is held as a
  // lazily parsed object that only this accessor turns into a map.
  std::optional<ov::AnyMap> section;
  try {
    if (!model.has_rt_info(kSection)) {
      return std::nullopt;
    }
    section = model.get_rt_info<ov::AnyMap>(kSection);
  } catch (const std::exception&) {
    return std::nullopt;  // a section that is not a map (a plain value)
  }
  std::vector<ModelInfoEntry> entries;
  std::vector<std::string> path;
  flatten(*section, path, entries);
  return entries;
}

}  // namespace ovmsx
