// BYTES codec for Python: the loops run in C++ (core/bytes_codec), this file only turns Python
// objects into byte views and results back into Python objects.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings/python_buffer.h"
#include "bindings/register.h"
#include "core/bytes_codec.h"
#include "core/tensor.h"

namespace ovmsx::bindings {
namespace {

// Above this many bytes, pack() copies with the GIL released.
constexpr std::size_t kReleaseGilBytes = 1 << 20;

// Byte views of every element of a Python sequence of bytes / str / buffer objects. The views
// stay valid while this object lives: it holds the sequence and any buffer exports.
class ElementViews {
 public:
  explicit ElementViews(py::handle items) {
    sequence_ = py::reinterpret_steal<py::object>(
        PySequence_Fast(items.ptr(), "BYTES elements must be given as an iterable"));
    if (!sequence_) {
      throw py::error_already_set();
    }
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence_.ptr());
    PyObject** objects = PySequence_Fast_ITEMS(sequence_.ptr());
    views_.reserve(static_cast<std::size_t>(count));
    for (Py_ssize_t i = 0; i < count; ++i) {
      views_.push_back(view_of(objects[i], i));
    }
  }

  const std::vector<ByteView>& views() const { return views_; }

  // Strong references to every element, so the views survive if another thread mutates the
  // sequence (a list) while this thread has released the GIL.
  std::vector<py::object> pin() const {
    std::vector<py::object> pinned;
    pinned.reserve(views_.size());
    PyObject** objects = PySequence_Fast_ITEMS(sequence_.ptr());
    for (std::size_t i = 0; i < views_.size(); ++i) {
      pinned.push_back(py::reinterpret_borrow<py::object>(objects[i]));
    }
    return pinned;
  }

 private:
  ByteView view_of(PyObject* item, Py_ssize_t index) {
    if (PyBytes_Check(item)) {
      return {reinterpret_cast<const std::uint8_t*>(PyBytes_AS_STRING(item)),
              static_cast<std::size_t>(PyBytes_GET_SIZE(item))};
    }
    if (PyUnicode_Check(item)) {
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(item, &size);  // cached on the str object
      if (!utf8) {
        throw py::error_already_set();
      }
      return {reinterpret_cast<const std::uint8_t*>(utf8), static_cast<std::size_t>(size)};
    }
    if (PyObject_CheckBuffer(item)) {
      exports_.push_back(std::make_unique<PyBufferView>(item, PyBUF_C_CONTIGUOUS, "element"));
      const Py_buffer& view = exports_.back()->get();
      return {static_cast<const std::uint8_t*>(view.buf), static_cast<std::size_t>(view.len)};
    }
    throw py::type_error("BYTES element " + std::to_string(index) +
                         " must be bytes, str or a contiguous buffer, got " +
                         std::string(py::str(py::type::handle_of(item).attr("__name__"))));
  }

  py::object sequence_;
  std::vector<ByteView> views_;
  std::vector<std::unique_ptr<PyBufferView>> exports_;
};

py::bytes pack_items(py::handle items) {
  ElementViews elements(items);
  const std::size_t total = packed_size(elements.views());
  // Write straight into the bytes object that is returned: no intermediate buffer.
  auto out = py::reinterpret_steal<py::bytes>(
      PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(total)));
  if (!out) {
    throw py::error_already_set();
  }
  auto* dst = reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(out.ptr()));
  if (total < kReleaseGilBytes) {
    pack(elements.views(), dst);
  } else {
    std::vector<py::object> pinned = elements.pin();
    py::gil_scoped_release nogil;
    pack(elements.views(), dst);
  }
  return out;
}

std::vector<ByteView> unpack_buffer(const PyBufferView& source, std::optional<std::size_t> count) {
  const Py_buffer& view = source.get();
  return unpack(static_cast<const std::uint8_t*>(view.buf), static_cast<std::size_t>(view.len),
                count);
}

py::list unpack_to_bytes(py::handle buffer, std::optional<std::size_t> count) {
  PyBufferView source(buffer, PyBUF_C_CONTIGUOUS, "BYTES buffer");
  const std::vector<ByteView> items = unpack_buffer(source, count);
  py::list out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    out[i] = py::bytes(reinterpret_cast<const char*>(items[i].data), items[i].size);
  }
  return out;
}

py::list unpack_to_views(py::handle buffer, std::optional<std::size_t> count) {
  // Slices of one flat byte memoryview: each keeps the exporter alive, none copies.
  py::object flat = py::memoryview(py::reinterpret_borrow<py::object>(buffer)).attr("cast")("B");
  PyBufferView source(flat, PyBUF_C_CONTIGUOUS, "BYTES buffer");
  const std::vector<ByteView> items = unpack_buffer(source, count);
  const auto* base = static_cast<const std::uint8_t*>(source.get().buf);
  py::list out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto start = static_cast<py::ssize_t>(items[i].data - base);
    const auto stop = start + static_cast<py::ssize_t>(items[i].size);
    out[i] = flat[py::slice(start, stop, 1)];
  }
  return out;
}

std::shared_ptr<Tensor> pack_padded_items(py::handle items, std::string name) {
  ElementViews elements(items);
  const std::vector<ByteView>& views = elements.views();
  const std::size_t width = padded_width(views);
  const Shape shape{static_cast<std::int64_t>(views.size()), static_cast<std::int64_t>(width)};
  const std::size_t nbytes = element_count(shape);
  auto memory = allocate_bytes(nbytes, /*zeroed=*/false);
  pack_padded(views, width, memory.get());
  const std::uint8_t* data = memory.get();
  return Tensor::view(std::move(name), "UINT8", shape, data, nbytes, std::move(memory));
}

py::list unpack_padded_buffer(py::handle buffer) {
  PyBufferView source(buffer, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, "padded string buffer");
  const Py_buffer& view = source.get();
  if (view.ndim != 2 || view.itemsize != 1) {
    throw py::value_error("padded strings must be a 2-D buffer of 1-byte items [N, width], got " +
                          std::to_string(view.ndim) + "-D with itemsize " +
                          std::to_string(view.itemsize));
  }
  const auto rows = static_cast<std::size_t>(view.shape[0]);
  const auto width = static_cast<std::size_t>(view.shape[1]);
  const std::vector<ByteView> items =
      unpack_padded(static_cast<const std::uint8_t*>(view.buf), rows, width);
  py::list out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    out[i] = py::bytes(reinterpret_cast<const char*>(items[i].data), items[i].size);
  }
  return out;
}

}  // namespace

void register_bytes_codec(py::module_& m) {
  m.def("bytes_pack", &pack_items, py::arg("items"));
  m.def("bytes_unpack", &unpack_to_bytes, py::arg("buffer"), py::arg("count") = py::none());
  m.def("bytes_unpack_views", &unpack_to_views, py::arg("buffer"), py::arg("count") = py::none());
  m.def("bytes_to_padded", &pack_padded_items, py::arg("items"), py::arg("name") = "");
  m.def("bytes_from_padded", &unpack_padded_buffer, py::arg("buffer"));
}

}  // namespace ovmsx::bindings
