// One register_<thing> per bound concept; module.cpp calls them in order.
#pragma once

#include <pybind11/pybind11.h>

namespace ovmsx::bindings {

void register_status(pybind11::module_& m);
void register_tensor(pybind11::module_& m);
void register_bytes_codec(pybind11::module_& m);
void register_kserve_wire(pybind11::module_& m);
void register_inference(pybind11::module_& m);
void register_kserve_direct(pybind11::module_& m);
void register_kserve_tensors(pybind11::module_& m);
void register_custom_node(pybind11::module_& m);
void register_json_depth(pybind11::module_& m);

}  // namespace ovmsx::bindings
