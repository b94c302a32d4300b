// Typed access to a custom node's params (struct CustomNodeParam[]), which OVMS's config hands
// over as strings: "params": {"add_number": "2", "mean_values": "[123.7,116.3,103.5]"}.
//
// OVMS's own nodes quietly fall back to the default when a value does not parse ("1O" for an
// int, a list without brackets). These getters throw NodeError(kBadParams) naming the key
// instead, so a typo fails the pipeline at load rather than running with the default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "custom_node_interface.h"

namespace ovmsx::custom_nodes {

class NodeParams {
 public:
  NodeParams(const struct CustomNodeParam* params, int count) : params_(params), count_(count) {}

  // The value of `key`, or nullopt when absent. Keys match exactly; the first match wins,
  // as in OVMS. Entries with a NULL key or value are skipped.
  std::optional<std::string_view> find(std::string_view key) const;

  // Absent -> nullopt; present but malformed -> NodeError(kBadParams).
  std::optional<std::int64_t> get_int(std::string_view key) const;
  std::optional<float> get_float(std::string_view key) const;
  // "[1.0,2,3.5]": square brackets, comma-separated, spaces allowed; "[]" is an empty list.
  std::optional<std::vector<float>> get_float_list(std::string_view key) const;

 private:
  const struct CustomNodeParam* params_;
  int count_;
};

}  // namespace ovmsx::custom_nodes
