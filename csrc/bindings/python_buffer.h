// Borrowing memory from Python objects through the buffer protocol (PEP 3118).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>

#include "core/tensor.h"

namespace ovmsx::bindings {

namespace py = pybind11;

// RAII over PyObject_GetBuffer / PyBuffer_Release. `what` names the argument in the TypeError
// raised for an object without the buffer protocol.
class PyBufferView {
 public:
  PyBufferView(py::handle source, int flags, const char* what);
  ~PyBufferView();
  PyBufferView(const PyBufferView&) = delete;
  PyBufferView& operator=(const PyBufferView&) = delete;

  const Py_buffer& get() const { return *view_; }
  bool c_contiguous() const;

  // Moves the export into an owner that releases it (taking the GIL) when the last holder
  // dies. Holding the export, not just a reference, is what the buffer protocol asks: e.g. a
  // bytearray cannot be resized while exported, so the memory cannot move under a Tensor.
  MemoryOwner into_owner() &&;

 private:
  std::unique_ptr<Py_buffer> view_;
};

// The bytes of any buffer as one C-contiguous run: the exporter's own memory when it is
// C-contiguous (zero copy; the export is kept in `owner`), or a single copy otherwise.
struct ContiguousBytes {
  const std::uint8_t* data;
  BufferLayout layout;  // the source's format, itemsize and shape, C-contiguous strides
  MemoryOwner owner;
};
ContiguousBytes contiguous_bytes(py::handle source, const char* what);

}  // namespace ovmsx::bindings
