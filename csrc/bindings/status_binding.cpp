// The status table for Python, and the one place a C++ StatusError becomes a Python exception.
#include <exception>
#include <string>

#include "bindings/register.h"
#include "core/status.h"

namespace ovmsx::bindings {

namespace py = pybind11;

void register_status(py::module_& m) {
  m.def(
      "status_table",
      [] {
        py::list rows;
        for (const StatusInfo* row = status_table_begin(); row != status_table_end(); ++row) {
          rows.append(py::make_tuple(std::string(row->name), static_cast<int>(row->code),
                                     std::string(row->message), static_cast<int>(row->grpc),
                                     row->http));
        }
        return rows;
      },
      "Rows (name, value, message, grpc_code, http_status) of the C++ StatusCode table.");

  m.def(
      "render_status",
      [](int code, const std::string& details) {
        if (code < 0 || code >= status_table_end() - status_table_begin()) {
          throw py::value_error("no StatusCode has the value " + std::to_string(code));
        }
        return render_status(static_cast<StatusCode>(code), details);
      },
      py::arg("code"), py::arg("details") = "",
      "OVMS's rendering of a status: its message, then ' - ' and the details if any.");

  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) {
        std::rethrow_exception(error);
      }
    } catch (const StatusError& status) {
      // ovmsx.status picks the exception class (e.g. a ValueError for INVALID_ARGUMENT codes).
      py::object exc = py::module_::import("ovmsx.status")
                           .attr("status_error")(static_cast<int>(status.code()), status.details());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}

}  // namespace ovmsx::bindings
