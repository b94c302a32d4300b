#include "core/custom_node_precision.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace ovmsx {
namespace {

struct Row {
  CustomNodeTensorPrecision precision;
  CustomNodeElement element;
};

constexpr std::array<Row, 9> kTable{{
    {FP32, {"FP32", 4}},
    {FP16, {"FP16", 2}},
    {U8, {"UINT8", 1}},
    {I8, {"INT8", 1}},
    {I16, {"INT16", 2}},
    {U16, {"UINT16", 2}},
    {I32, {"INT32", 4}},
    {FP64, {"FP64", 8}},
    {I64, {"INT64", 8}},
}};

static_assert(sizeof(CustomNodeTensorPrecision) == sizeof(std::int32_t),
              "the ABI lays the precision out as a 4-byte enum (COMPAT.md §1.1)");

}  // namespace

CustomNodeTensorPrecision precision_of_datatype(std::string_view datatype) {
  for (const Row& row : kTable) {
    if (row.element.datatype == datatype) {
      return row.precision;
    }
  }
  return UNSPECIFIED;
}

std::optional<CustomNodeElement> element_of_precision(const CustomNodeTensorPrecision& precision) {
  // A library is C code and may store any int there; loading it as the enum would let the
  // compiler assume a value in range.
  std::int32_t raw = 0;
  std::memcpy(&raw, &precision, sizeof(raw));
  for (const Row& row : kTable) {
    if (static_cast<std::int32_t>(row.precision) == raw) {
      return row.element;
    }
  }
  return std::nullopt;
}

}  // namespace ovmsx
