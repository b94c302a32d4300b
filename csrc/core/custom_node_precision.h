// CustomNodeTensorPrecision <-> KServe datatype (COMPAT.md §1.1 enum, §1.3 input mapping).
//
// The C enum has nine element types; anything else a Tensor may hold (BOOL, UINT32, UINT64,
// BF16, BYTES, custom strings) reaches a library as UNSPECIFIED, as OVMS sends it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "custom_node_interface.h"

namespace ovmsx {

struct CustomNodeElement {
  std::string_view datatype;  // KServe name, e.g. "UINT8" for U8
  std::size_t itemsize;
};

// The precision a library sees for a Tensor of this datatype; UNSPECIFIED when it has none.
CustomNodeTensorPrecision precision_of_datatype(std::string_view datatype);

// The element type of a precision a library returned, read as its raw int so that garbage
// outside the enum is caught too; nullopt for UNSPECIFIED and anything out of range.
std::optional<CustomNodeElement> element_of_precision(const CustomNodeTensorPrecision& precision);

}  // namespace ovmsx
