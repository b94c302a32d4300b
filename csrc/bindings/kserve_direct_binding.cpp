// ModelInfer answered whole in C++ for quick models (see core/kserve_direct_infer.h).
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/register.h"
#include "core/kserve_direct_infer.h"

namespace ovmsx::bindings {
namespace py = pybind11;
namespace {

// Writing more than this releases the GIL, so other requests go on meanwhile.
constexpr std::size_t kReleaseGilBytes = 1 << 20;

std::pair<const std::uint8_t*, std::size_t> bytes_of(const py::bytes& message) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(message.ptr(), &data, &size);
  return {reinterpret_cast<const std::uint8_t*>(data), static_cast<std::size_t>(size)};
}

// A str of UTF-8 bytes, or None when they are not valid UTF-8.
py::object text_or_none(const std::uint8_t* data, std::size_t size) {
  PyObject* text = PyUnicode_DecodeUTF8(reinterpret_cast<const char*>(data),
                                        static_cast<Py_ssize_t>(size), "strict");
  if (text == nullptr) {
    PyErr_Clear();
    return py::none();
  }
  return py::reinterpret_steal<py::object>(text);
}

py::object infer_target(const py::bytes& message) {
  const auto [data, size] = bytes_of(message);
  const std::optional<InferTarget> target = read_infer_target(data, size);
  if (!target) {
    return py::none();
  }
  py::object name = text_or_none(data + target->name_offset, target->name_size);
  py::object version = text_or_none(data + target->version_offset, target->version_size);
  if (name.is_none() || version.is_none()) {
    return py::none();
  }
  return py::make_tuple(std::move(name), std::move(version));
}

// A bytes object of `size` bytes to fill in place (CPython allows writing into a bytes object
// until it is shared).
std::pair<py::bytes, std::uint8_t*> new_bytes(std::size_t size) {
  PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
  if (raw == nullptr) {
    throw py::error_already_set();
  }
  return {py::reinterpret_steal<py::bytes>(raw),
          reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(raw))};
}

py::object answer(const DirectInfer& direct, const py::bytes& message) {
  // `message` is held by the caller for the whole call, so its bytes stay put. Reading it
  // skips the tensor data, so it is quick enough to keep the GIL for.
  const auto [data, size] = bytes_of(message);
  const std::optional<DirectPlan> plan = direct.plan(data, size);
  if (!plan) {
    return py::none();
  }
  if (const auto head = direct.static_head(*plan)) {
    // Outputs of a known size: OpenVINO writes them straight into the response.
    auto [out, cursor] = new_bytes(head->size);
    py::gil_scoped_release release;
    direct.run_into(*plan, *head, cursor);
    return std::move(out);
  }
  std::optional<TensorResponse> result;
  {
    py::gil_scoped_release release;
    result = direct.run(*plan);
  }
  auto [out, cursor] = new_bytes(result->size());
  if (result->size() > kReleaseGilBytes) {
    py::gil_scoped_release release;
    result->write(cursor);
  } else {
    result->write(cursor);
  }
  return std::move(out);
}

py::object submit(const DirectInfer& direct, const py::bytes& message, std::uint64_t token) {
  const auto [data, size] = bytes_of(message);
  const std::optional<DirectPlan> plan = direct.plan(data, size);
  if (!plan) {
    return py::none();
  }
  const auto head = direct.static_head(*plan);
  if (!head) {
    return py::none();
  }
  auto [out, cursor] = new_bytes(head->size);
  direct.submit_into(*plan, *head, cursor, token);
  return std::move(out);
}

}  // namespace

void register_kserve_direct(py::module_& m) {
  m.def("infer_target", &infer_target, py::arg("message"),
        "(model_name, model_version) of a serialized ModelInferRequest, or None when they "
        "cannot be read (malformed, mistyped or not UTF-8).");
  py::class_<DirectInfer>(
      m, "DirectInfer",
      "ModelInfer of plain requests to one model version, whole in C++ (parse, infer, encode).")
      .def(py::init<std::shared_ptr<InferencePool>, std::vector<PortInfo>, std::vector<PortInfo>,
                    std::string>(),
           py::arg("pool"), py::arg("inputs"), py::arg("outputs"), py::arg("version"))
      .def("answer", &answer, py::arg("message"),
           "The serialized ModelInferResponse, blocking this thread for the inference (GIL "
           "released); None when the request is not a plain one, so the general path answers. "
           "Raises StatusError when the inference fails.")
      .def("submit", &submit, py::arg("message"), py::arg("token"),
           "Start the inference of a plain request whose outputs have static shapes; returns "
           "the response's bytes, which OpenVINO fills by the time the pool's CompletionQueue "
           "delivers `token`. The caller keeps `message` and those bytes alive until then. "
           "None when the request is not one of these, so the general path answers it.");
}

}  // namespace ovmsx::bindings
