// The only PYBIND11_MODULE of ovmsx: the private extension ovmsx._core.
#include <pybind11/pybind11.h>

#include "bindings/register.h"
#include "core/allocator_tuning.h"
#include "core/runtime_info.h"

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "ovmsx C++ core: Tensor, BYTES codec, status table, KServe wire helpers, inference. Private; "
      "use ovmsx / pyovms.";
  ovmsx::bindings::register_status(m);
  ovmsx::bindings::register_tensor(m);
  ovmsx::bindings::register_bytes_codec(m);
  ovmsx::bindings::register_kserve_wire(m);
  ovmsx::bindings::register_inference(m);
  ovmsx::bindings::register_kserve_direct(m);
  ovmsx::bindings::register_kserve_tensors(m);
  ovmsx::bindings::register_custom_node(m);
  ovmsx::bindings::register_json_depth(m);
  m.def("tune_allocator", &ovmsx::tune_allocator, pybind11::arg("mmap_threshold"),
        pybind11::arg("trim_threshold"),
        "Raise glibc's mmap and trim thresholds (bytes); False where unsupported.");
  m.def("release_free_memory", &ovmsx::release_free_memory,
        pybind11::call_guard<pybind11::gil_scoped_release>(),
        "Give the free memory glibc keeps for reuse back to the kernel; True if some was.");
  m.def("openvino_version", &ovmsx::openvino_version,
        "Build number of the OpenVINO runtime _core is linked with.");
}
