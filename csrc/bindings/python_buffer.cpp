#include "bindings/python_buffer.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ovmsx::bindings {
namespace {

struct ReleaseWithGil {
  void operator()(Py_buffer* view) const {
    // The last holder may be a C++ thread (an inference callback); the release touches Python
    // objects, so it needs the GIL. After interpreter shutdown there is nothing left to release.
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      PyBuffer_Release(view);
    }
    delete view;
  }
};

// RAII over PyObject_GetBuffer / PyBuffer_Release.
class PyBufferView {
 public:
  PyBufferView(py::handle source, int flags, const char* what)
      : view_(std::make_unique<Py_buffer>()) {
    if (PyObject_GetBuffer(source.ptr(), view_.get(), flags) != 0) {
      view_.reset();
      if (!PyObject_CheckBuffer(source.ptr())) {
        PyErr_Clear();
        throw py::type_error(std::string(what) +
                             " must support the buffer protocol (bytes, bytearray, memoryview, "
                             "numpy.ndarray, …), got " +
                             std::string(py::str(py::type::handle_of(source).attr("__name__"))));
      }
      throw py::error_already_set();  // the exporter's own reason, e.g. a BufferError
    }
  }
  ~PyBufferView() {
    if (view_) {
      PyBuffer_Release(view_.get());
    }
  }
  PyBufferView(const PyBufferView&) = delete;
  PyBufferView& operator=(const PyBufferView&) = delete;

  const Py_buffer& get() const { return *view_; }

  // Moves the export into an owner that releases it when the last holder dies. Holding the
  // export, not just a reference, is what the buffer protocol asks: e.g. a bytearray cannot be
  // resized while exported, so the memory cannot move under a Tensor.
  MemoryOwner into_owner() && {
    return std::shared_ptr<Py_buffer>(view_.release(), ReleaseWithGil{});
  }

 private:
  std::unique_ptr<Py_buffer> view_;
};

}  // namespace

ContiguousBytes contiguous_bytes(py::handle source, const char* what) {
  // Strides and format are requested so that any exporter, strided or not, can answer.
  PyBufferView view(source, PyBUF_RECORDS_RO, what);
  const Py_buffer& info = view.get();
  std::vector<std::size_t> shape;
  if (info.shape) {
    shape.assign(info.shape, info.shape + info.ndim);
  } else if (info.ndim == 1) {
    shape.push_back(static_cast<std::size_t>(info.len / info.itemsize));
  }
  BufferLayout layout = BufferLayout::contiguous(
      info.format ? info.format : "B", static_cast<std::size_t>(info.itemsize), std::move(shape));
  if (PyBuffer_IsContiguous(&info, 'C')) {
    const auto* data = static_cast<const std::uint8_t*>(info.buf);
    return {data, std::move(layout), std::move(view).into_owner()};
  }
  // A strided source (a slice, a transpose) is gathered once into memory of our own: every
  // consumer downstream (KServe raw contents, OpenVINO, custom nodes) needs C order.
  auto copy = allocate_bytes(static_cast<std::size_t>(info.len), /*zeroed=*/false);
  if (PyBuffer_ToContiguous(copy.get(), &info, info.len, 'C') != 0) {
    throw py::error_already_set();
  }
  const std::uint8_t* data = copy.get();
  return {data, std::move(layout), std::move(copy)};
}

}  // namespace ovmsx::bindings
