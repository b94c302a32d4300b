// KServe messages to and from Tensors without Python protobuf objects: what graphs of Python
// nodes receive and send. Reading a request costs a few microseconds here against tens in
// protobuf, and it runs on the gRPC polling thread, which every request shares.
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings/python_buffer.h"
#include "bindings/register.h"
#include "core/kserve_request_reader.h"
#include "core/kserve_response_writer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/utf8.h"

namespace ovmsx::bindings {
namespace py = pybind11;
namespace {

// Writing more than this releases the GIL, so other requests go on meanwhile.
constexpr std::size_t kReleaseGilBytes = 1 << 20;

py::str text(std::string_view view) {
  return py::str(view.data(), static_cast<py::ssize_t>(view.size()));
}

// (model_name, model_version, id, [Tensor]) of a plain request whose inputs are all in
// raw_input_contents, each Tensor a view of the message (which it keeps alive); None for
// anything else, which the general path then reads and, if wrong, words the error for.
py::object read_raw_inputs(const py::bytes& message) {
  ContiguousBytes bytes = contiguous_bytes(message, "message");
  const std::optional<PlainRequest> request = read_plain_request(bytes.data, bytes.layout.nbytes());
  if (!request || request->inputs.empty() || request->raw.size() != request->inputs.size() ||
      !valid_utf8(request->model_name) || !valid_utf8(request->model_version) ||
      !valid_utf8(request->id)) {
    return py::none();
  }
  py::list tensors(request->inputs.size());
  for (std::size_t i = 0; i < request->inputs.size(); ++i) {
    const RequestedInput& input = request->inputs[i];
    if (!valid_utf8(input.name) || !valid_utf8(input.datatype)) {
      return py::none();
    }
    const ByteRange raw = request->raw[i];
    std::shared_ptr<Tensor> tensor;
    try {
      // As pyovms takes raw contents: a datatype of the table must fit the bytes exactly;
      // BYTES and custom datatypes are taken as they are.
      tensor = Tensor::view(std::string(input.name), std::string(input.datatype), input.shape,
                            bytes.data + raw.offset, raw.size, bytes.owner);
    } catch (const StatusError&) {  // a size mismatch or a negative dim
      return py::none();
    }
    tensors[i] = py::cast(std::move(tensor));
  }
  return py::make_tuple(text(request->model_name), text(request->model_version), text(request->id),
                        std::move(tensors));
}

py::bytes encode_tensor_response(
    const std::string& model_name, const std::string& model_version, const std::string& id,
    const std::vector<std::pair<std::string, std::shared_ptr<Tensor>>>& outputs,
    const std::optional<std::pair<std::string, std::int64_t>>& parameter) {
  std::vector<std::pair<std::string_view, std::shared_ptr<Tensor>>> named;
  named.reserve(outputs.size());
  for (const auto& [name, tensor] : outputs) {
    if (!tensor) {
      throw py::type_error("encode_tensor_response: an output is None");
    }
    named.emplace_back(name, tensor);
  }
  std::optional<std::pair<std::string_view, std::int64_t>> entry;
  if (parameter) {
    entry.emplace(parameter->first, parameter->second);
  }
  const TensorResponse response(model_name, model_version, id, entry, std::move(named));
  // One allocation for the whole message, filled in place (CPython allows writing into a
  // bytes object until it is shared).
  PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(response.size()));
  if (raw == nullptr) {
    throw py::error_already_set();
  }
  py::bytes out = py::reinterpret_steal<py::bytes>(raw);
  auto* cursor = reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(raw));
  if (response.size() > kReleaseGilBytes) {
    py::gil_scoped_release release;
    response.write(cursor);
  } else {
    response.write(cursor);
  }
  return out;
}

}  // namespace

void register_kserve_tensors(py::module_& m) {
  m.def("read_raw_inputs", &read_raw_inputs, py::arg("message"),
        "(model_name, model_version, id, [Tensor]) of a serialized ModelInferRequest whose "
        "inputs all come as raw_input_contents, each Tensor viewing the message; None when the "
        "request has anything else (parameters, typed contents, a size that does not fit its "
        "datatype, malformed bytes), which the general path reads.");
  m.def("encode_tensor_response", &encode_tensor_response, py::arg("model_name"),
        py::arg("model_version"), py::arg("id"), py::arg("outputs"),
        py::arg("parameter") = py::none(),
        "A serialized ModelInferResponse: the (name, Tensor) outputs as raw_output_contents, "
        "and `parameter`, if given, as one (name, int64) response parameter.");
}

}  // namespace ovmsx::bindings
