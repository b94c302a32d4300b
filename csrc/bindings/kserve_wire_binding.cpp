// Wire-level helpers for the KServe frontend (see core/kserve_wire.h for why they exist).
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "bindings/register.h"
#include "core/kserve_bytes_contents.h"
#include "core/kserve_wire.h"
#include "core/tensor.h"

namespace ovmsx::bindings {
namespace py = pybind11;
namespace {

// Copying more than this releases the GIL, so other requests go on meanwhile.
constexpr std::size_t kReleaseGilBytes = 1 << 20;

py::tuple split_field(const py::bytes& message, std::uint32_t field_number) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(message.ptr(), &data, &size);
  FieldSplit split = split_length_delimited(reinterpret_cast<const std::uint8_t*>(data),
                                            static_cast<std::size_t>(size), field_number);
  if (split.payloads.empty()) {
    return py::make_tuple(message, py::list());  // nothing cut out: the message is the rest
  }
  py::list ranges(split.payloads.size());
  for (std::size_t i = 0; i < split.payloads.size(); ++i) {
    ranges[i] = py::make_tuple(split.payloads[i].offset, split.payloads[i].size);
  }
  return py::make_tuple(py::bytes(split.rest), std::move(ranges));
}

py::bytes append_field(const py::bytes& head, std::uint32_t field_number,
                       const std::vector<std::shared_ptr<Tensor>>& payloads) {
  char* head_data = nullptr;
  Py_ssize_t head_size = 0;
  PyBytes_AsStringAndSize(head.ptr(), &head_data, &head_size);
  std::size_t total = static_cast<std::size_t>(head_size);
  for (const auto& tensor : payloads) {
    if (!tensor) {
      throw py::type_error("append_field: a payload is None");
    }
    total += length_delimited_size(field_number, tensor->size());
  }
  // One allocation for the whole message, filled in place (CPython allows writing into a
  // bytes object until it is shared).
  PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(total));
  if (raw == nullptr) {
    throw py::error_already_set();
  }
  py::bytes out = py::reinterpret_steal<py::bytes>(raw);
  auto* cursor = reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(raw));
  auto fill = [&] {
    std::memcpy(cursor, head_data, static_cast<std::size_t>(head_size));
    std::uint8_t* end = cursor + head_size;
    for (const auto& tensor : payloads) {
      end = write_length_delimited(end, field_number, tensor->data(), tensor->size());
    }
  };
  if (total > kReleaseGilBytes) {
    py::gil_scoped_release release;
    fill();
  } else {
    fill();
  }
  return out;
}

py::tuple split_bytes_contents(const py::bytes& message) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(message.ptr(), &data, &size);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
  const auto length = static_cast<std::size_t>(size);
  const std::vector<BytesContents> found = scan_bytes_contents(bytes, length);
  if (found.empty()) {
    return py::make_tuple(message, py::list());  // nothing cut out: the message is the rest
  }
  // Each input's elements are written straight into the bytes object that is returned.
  py::list inputs(found.size());
  std::vector<std::uint8_t*> outputs;
  std::size_t total = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    PyObject* raw =
        PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(found[i].packed_size));
    if (raw == nullptr) {
      throw py::error_already_set();
    }
    py::bytes packed = py::reinterpret_steal<py::bytes>(raw);
    outputs.push_back(reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(raw)));
    inputs[i] = py::make_tuple(found[i].input, found[i].count, packed);
    total += found[i].packed_size;
  }
  std::string rest;
  if (total > kReleaseGilBytes) {
    py::gil_scoped_release release;
    rest = cut_bytes_contents(bytes, length, outputs);
  } else {
    rest = cut_bytes_contents(bytes, length, outputs);
  }
  return py::make_tuple(py::bytes(rest), std::move(inputs));
}

}  // namespace

void register_kserve_wire(py::module_& m) {
  m.def("split_field", &split_field, py::arg("message"), py::arg("field_number"),
        "Split a serialized message into (other fields, [(offset, size)] of each occurrence of "
        "the length-delimited field).");
  m.def("split_bytes_contents", &split_bytes_contents, py::arg("message"),
        "Split a serialized ModelInferRequest into (the request without bytes_contents, "
        "[(input index, element count, the elements in the KServe BYTES layout)]).");
  m.def("append_field", &append_field, py::arg("head"), py::arg("field_number"),
        py::arg("payloads"),
        "head + one length-delimited occurrence of the field per Tensor, built in one copy.");
}

}  // namespace ovmsx::bindings
