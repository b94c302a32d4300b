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
    // A lone bytes or str is itself a sequence (of ints, of characters): almost surely a
    // forgotten list around one element, so it is refused rather than packed piecewise.
    if (PyBytes_Check(items.ptr()) || PyUnicode_Check(items.ptr()) ||
        PyByteArray_Check(items.ptr())) {
      throw py::type_error("BYTES elements must be an iterable of elements, got a single " +
                           type_name(items) + "; wrap it in a list");
    }
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
      ContiguousBytes bytes = contiguous_bytes(item, "BYTES element");
      owners_.push_back(std::move(bytes.owner));
      return {bytes.data, bytes.layout.nbytes()};
    }
    throw py::type_error("BYTES element " + std::to_string(index) +
                         " must be bytes, str or a buffer, got " + type_name(item));
  }

  static std::string type_name(py::handle object) {
    return py::str(py::type::handle_of(object).attr("__name__"));
  }

  py::object sequence_;
  std::vector<ByteView> views_;
  std::vector<MemoryOwner> owners_;  // buffer elements' exports (or copies, if strided)
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

py::list copies_of(const std::vector<ByteView>& items) {
  py::list out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    out[i] = py::bytes(reinterpret_cast<const char*>(items[i].data), items[i].size);
  }
  return out;
}

py::list unpack_to_bytes(py::handle buffer, std::optional<std::size_t> count) {
  const ContiguousBytes source = contiguous_bytes(buffer, "BYTES buffer");
  return copies_of(unpack(source.data, source.layout.nbytes(), count));
}

py::list unpack_to_views(py::handle buffer, std::optional<std::size_t> count) {
  ContiguousBytes source = contiguous_bytes(buffer, "BYTES buffer");
  const std::size_t nbytes = source.layout.nbytes();
  const std::vector<ByteView> items = unpack(source.data, nbytes, count);
  // A BYTES Tensor over the source is a flat run of bytes whatever the source's format; each
  // slice of its memoryview keeps it (and so the source) alive, and none copies.
  const auto flat = Tensor::view("", "BYTES", {static_cast<std::int64_t>(nbytes)}, source.data,
                                 nbytes, std::move(source.owner));
  py::object bytes_view = py::memoryview(py::cast(flat));
  py::list out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto start = static_cast<py::ssize_t>(items[i].data - flat->data());
    const auto stop = start + static_cast<py::ssize_t>(items[i].size);
    out[i] = bytes_view[py::slice(start, stop, 1)];
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
  const ContiguousBytes source = contiguous_bytes(buffer, "padded string buffer");
  const BufferLayout& layout = source.layout;
  if (layout.shape.size() != 2 || layout.itemsize != 1) {
    throw py::value_error("padded strings must be a 2-D buffer of 1-byte items [N, width], got " +
                          std::to_string(layout.shape.size()) + "-D with itemsize " +
                          std::to_string(layout.itemsize));
  }
  return copies_of(unpack_padded(source.data, layout.shape[0], layout.shape[1]));
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
