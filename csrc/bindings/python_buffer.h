// Borrowing memory from Python objects through the buffer protocol (PEP 3118).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "core/tensor.h"

namespace ovmsx::bindings {

namespace py = pybind11;

// The bytes of any buffer as one C-contiguous run: the exporter's own memory when it is
// C-contiguous (zero copy), or a single copy otherwise. `owner` keeps the memory valid: it holds
// the buffer export (released with the GIL, from whichever thread drops it last) or the copy.
// `what` names the argument in the TypeError raised for an object without the buffer protocol.
struct ContiguousBytes {
  const std::uint8_t* data;
  BufferLayout layout;  // the source's format, itemsize and shape, C-contiguous strides
  MemoryOwner owner;
};
ContiguousBytes contiguous_bytes(py::handle source, const char* what);

}  // namespace ovmsx::bindings
