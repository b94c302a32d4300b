// The JSON nesting scan for Python: it reads any buffer (bytes, a memoryview of a body) in place.
#include <optional>

#include "bindings/register.h"
#include "core/json_depth.h"

namespace ovmsx::bindings {

namespace py = pybind11;

namespace {
// Below this many bytes the scan takes less than handing the GIL over would.
constexpr std::size_t kReleaseGilBytes = 1 << 20;
}  // namespace

void register_json_depth(py::module_& m) {
  m.def(
      "json_depth_exceeded_at",
      [](const py::buffer& text, std::size_t limit) {
        const py::buffer_info info = text.request();
        if (info.ndim != 1 || info.itemsize != 1 || info.strides[0] != 1) {
          throw py::type_error("json_depth_exceeded_at reads a contiguous run of bytes");
        }
        const auto* data = static_cast<const char*>(info.ptr);
        const auto size = static_cast<std::size_t>(info.size);
        std::optional<py::gil_scoped_release> released;  // `info` keeps the bytes pinned
        if (size >= kReleaseGilBytes) {
          released.emplace();
        }
        return json_depth_exceeded_at(data, size, limit);
      },
      py::arg("text"), py::arg("limit"),
      "Offset of the first '[' or '{' opening a container more than `limit` levels deep "
      "(strings skipped), or -1.");
}

}  // namespace ovmsx::bindings
