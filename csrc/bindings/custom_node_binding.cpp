// Custom nodes for Python: CustomNodeLibrary.load(path).initialize(params) -> CustomNode.
//
// Every call into a library runs without the GIL (execute may take long, and libraries never
// call back into Python); results become Python objects after the GIL is taken back.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bindings/register.h"
#include "core/custom_node_instance.h"
#include "core/custom_node_library.h"

namespace ovmsx::bindings {
namespace py = pybind11;
namespace {

std::string info_repr(const TensorInfo& info) {
  std::string shape = "[";
  for (std::size_t i = 0; i < info.shape.size(); ++i) {
    shape += (i ? ", " : "") + std::to_string(info.shape[i]);
  }
  return "TensorInfo(name=" + std::string(py::repr(py::str(info.name))) +
         ", datatype=" + std::string(py::repr(py::str(info.datatype))) + ", shape=" + shape + "])";
}

}  // namespace

void register_custom_node(py::module_& m) {
  py::class_<TensorInfo>(m, "TensorInfo",
                         "One input or output a custom node library declares (getInputsInfo / "
                         "getOutputsInfo).")
      .def_readonly("name", &TensorInfo::name)
      .def_readonly("datatype", &TensorInfo::datatype, "KServe datatype; '' for UNSPECIFIED.")
      .def_readonly("shape", &TensorInfo::shape, "Dims; -1 where the library said 0 (any size).")
      .def("__repr__", &info_repr);

  py::class_<CustomNode>(m, "CustomNode", R"doc(
One pipeline node's instance of a custom node library: initialized with the node's params,
deinitialized once it is closed (or garbage) and the last Tensor it produced has died.
)doc")
      .def("inputs_info", &CustomNode::inputs_info, py::call_guard<py::gil_scoped_release>(),
           "getInputsInfo with the node's params.")
      .def("outputs_info", &CustomNode::outputs_info, py::call_guard<py::gil_scoped_release>(),
           "getOutputsInfo with the node's params.")
      .def("execute", &CustomNode::execute, py::arg("inputs"),
           py::call_guard<py::gil_scoped_release>(),
           "Run the library on these Tensors (without the GIL); its outputs, in its order, as "
           "Tensors viewing its memory.")
      .def("close", &CustomNode::close, py::call_guard<py::gil_scoped_release>(),
           "Retire the node; deinitialize follows once its last output Tensor dies. "
           "Idempotent.");

  py::class_<CustomNodeLibrary, std::shared_ptr<CustomNodeLibrary>>(
      m, "CustomNodeLibrary", "A custom node shared library with the six ABI functions resolved.")
      .def_static(
          "load",
          [](const std::filesystem::path& path) {
            // Held as const in C++; Python has no const, and the class has no mutators.
            return std::const_pointer_cast<CustomNodeLibrary>(
                CustomNodeLibrary::load(path.string()));
          },
          py::arg("path"), py::call_guard<py::gil_scoped_release>(),
          "dlopen the library and resolve initialize, deinitialize, execute, getInputsInfo, "
          "getOutputsInfo and release.")
      .def_property_readonly("path", &CustomNodeLibrary::path)
      .def(
          "initialize",
          [](const std::shared_ptr<CustomNodeLibrary>& library, CustomNodeParams params) {
            return std::make_unique<CustomNode>(library, std::move(params));
          },
          py::arg("params"), py::call_guard<py::gil_scoped_release>(),
          "Call initialize with a NULL manager and these params: one pipeline node's instance.")
      .def("__repr__", [](const CustomNodeLibrary& library) {
        return "CustomNodeLibrary(" + std::string(py::repr(py::str(library.path()))) + ")";
      });
}

}  // namespace ovmsx::bindings
