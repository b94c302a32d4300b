// The inference path as Python sees it: read → (reshape, layouts) → compile → InferencePool,
// with completions drained from a CompletionQueue by the event loop.
//
// Every call that can take OpenVINO time (read, compile, large submits, infer, close) runs
// without the GIL.
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/register.h"
#include "core/completion_queue.h"
#include "core/inference_pool.h"
#include "core/model_source.h"

namespace ovmsx::bindings {
namespace py = pybind11;
namespace {

using DimList = std::vector<std::pair<std::int64_t, std::int64_t>>;

std::map<std::string, std::vector<DimBounds>> to_bounds(const std::map<std::string, DimList>& in) {
  std::map<std::string, std::vector<DimBounds>> out;
  for (const auto& [name, dims] : in) {
    auto& target = out[name];
    for (const auto& [min, max] : dims) {
      target.push_back({min, max});
    }
  }
  return out;
}

py::list drain(CompletionQueue& queue) {
  std::vector<Completion> done = queue.drain();
  py::list out(done.size());
  for (std::size_t i = 0; i < done.size(); ++i) {
    Completion& c = done[i];
    out[i] = py::make_tuple(c.token, py::cast(std::move(c.outputs)), static_cast<int>(c.code),
                            std::move(c.details));
  }
  // `done` still holds the inputs; they are released here, with the GIL held.
  return out;
}

// BYTES inputs are unpacked into std::string elements during submit; for large buffers that is
// real work, done without the GIL.
bool has_large_bytes_input(const std::vector<std::shared_ptr<Tensor>>& inputs) {
  constexpr std::size_t kLargeBytes = 1 << 16;
  for (const auto& input : inputs) {
    if (input && input->datatype() == "BYTES" && input->size() > kLargeBytes) {
      return true;
    }
  }
  return false;
}

// OpenVINO's text is not always UTF-8 (a key or value can hold any bytes): invalid bytes are
// replaced rather than failing the whole metadata.
py::str text_of(const std::string& text) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (decoded == nullptr) {
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::str>(decoded);
}

// rt_info["model_info"] as nested dicts: each entry's map is found by walking its path, which
// exists already, since the core lists a map before its entries.
py::object model_info_dict(const ModelSource& source) {
  const auto entries = source.model_info();
  if (!entries) {
    return py::none();
  }
  py::dict root;
  for (const auto& entry : *entries) {
    py::dict parent = root;
    for (std::size_t i = 0; i + 1 < entry.path.size(); ++i) {
      parent = parent[text_of(entry.path[i])].cast<py::dict>();
    }
    if (entry.is_map) {
      parent[text_of(entry.path.back())] = py::dict();
    } else {
      parent[text_of(entry.path.back())] = text_of(entry.value);
    }
  }
  return std::move(root);
}

std::string property_as_string(const ov::CompiledModel& model, const std::string& name) {
  return model.get_property(name).as<std::string>();
}

}  // namespace

void register_inference(py::module_& m) {
  py::class_<PortInfo>(m, "PortInfo", "One input or output of a model, as clients see it.")
      .def_readonly("name", &PortInfo::name)
      .def_readonly("datatype", &PortInfo::datatype)
      .def_readonly("rank_dynamic", &PortInfo::rank_dynamic)
      .def_property_readonly("dims",
                             [](const PortInfo& port) {
                               DimList dims;
                               for (const auto& dim : port.dims) {
                                 dims.emplace_back(dim.min, dim.max);
                               }
                               return dims;
                             })
      .def_readonly("layout", &PortInfo::layout)
      .def("__repr__", [](const PortInfo& port) {
        return "PortInfo(name=" + port.name + ", datatype=" + port.datatype + ")";
      });

  py::class_<ov::CompiledModel>(m, "CompiledModel", "A model compiled for one device.")
      .def_property_readonly(
          "inputs", [](const ov::CompiledModel& model) { return describe_ports(model.inputs()); })
      .def_property_readonly(
          "outputs", [](const ov::CompiledModel& model) { return describe_ports(model.outputs()); })
      .def("get_property", &property_as_string, py::arg("name"),
           "A compiled-model property (e.g. NUM_STREAMS) as a string.");

  py::class_<ModelSource>(m, "ModelSource", "A model read from disk, not yet compiled.")
      .def_static("read", &ModelSource::read, py::arg("path"),
                  py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("inputs", &ModelSource::inputs)
      .def_property_readonly("outputs", &ModelSource::outputs)
      .def_property_readonly("model_info", &model_info_dict,
                             "rt_info['model_info'] as nested dicts of strings, or None.")
      .def(
          "prepare_inputs",
          [](ModelSource& source,
             const std::map<std::string, std::pair<std::string, std::string>>& layouts,
             std::optional<std::pair<std::string, std::string>> color,
             std::optional<std::pair<std::string, std::string>> element_types,
             std::optional<InputSteps::Values> mean, std::optional<InputSteps::Values> scale) {
            InputSteps steps{std::move(color), std::move(element_types), std::move(mean),
                             std::move(scale)};
            py::gil_scoped_release release;
            source.prepare_inputs(layouts, steps);
          },
          py::arg("layouts"), py::kw_only(), py::arg("color") = py::none(),
          py::arg("element_types") = py::none(), py::arg("mean") = py::none(),
          py::arg("scale") = py::none(),
          "{input: (tensor_layout, model_layout)}; empty strings leave a side unset. The keywords "
          "add preprocessing to the single input: color and element_types are (client's, "
          "model's) pairs (OVMS color names, OpenVINO type names), mean and scale a float or one "
          "per channel.")
      .def(
          "reshape",
          [](ModelSource& source, const std::map<std::string, DimList>& shapes) {
            auto bounds = to_bounds(shapes);
            py::gil_scoped_release release;
            source.reshape(bounds);
          },
          py::arg("shapes"), "{input: [(min, max), ...]}; max -1 means unbounded.")
      .def("compile", &ModelSource::compile, py::arg("device"), py::arg("properties"),
           py::call_guard<py::gil_scoped_release>());

  py::class_<CompletionQueue, std::shared_ptr<CompletionQueue>>(
      m, "CompletionQueue", "Finished inferences, waiting for the event loop.")
      .def(py::init<>())
      .def_property_readonly("fd", &CompletionQueue::fd, "Readable while completions wait.")
      .def("drain", &drain, "[(token, outputs, status code, details)] of everything finished.");

  py::class_<InferencePool, std::shared_ptr<InferencePool>>(
      m, "InferencePool",
      "A compiled model with nireq infer requests; submit() never blocks, infer() does.")
      // The GIL is released around the pool's creation only, not with a call_guard: a factory
      // constructor's guard would also cover pybind11 registering the new instance, and models
      // loading on several threads then corrupted its instance registry (a rare abort at
      // start, "Tried to deallocate unregistered instance").
      .def(py::init([](ov::CompiledModel model, std::size_t nireq,
                       std::shared_ptr<CompletionQueue> completions) {
             py::gil_scoped_release released;
             return InferencePool::create(std::move(model), nireq, std::move(completions));
           }),
           py::arg("model"), py::arg("nireq"), py::arg("completions"))
      .def_property_readonly("size", &InferencePool::size)
      .def_property_readonly("active", &InferencePool::active, "Infer requests in use now.")
      .def_property_readonly(
          "inference_time", [](const InferencePool& pool) { return pool.timing().average(); },
          "Seconds a blocking inference takes (moving average, measured around infer() on the "
          "caller's thread; the fastest of the first ones while warming up); inf before the "
          "first.")
      .def_property_readonly(
          "inferences", [](const InferencePool& pool) { return pool.timing().count(); },
          "Blocking inferences measured so far.")
      .def_property_readonly(
          "round_trip_time",
          [](const InferencePool& pool) { return pool.round_trip_timing().average(); },
          "Seconds a submitted inference takes from its start to its completion on OpenVINO's "
          "thread, waking that thread included (averaged like inference_time).")
      .def_property_readonly(
          "round_trips", [](const InferencePool& pool) { return pool.round_trip_timing().count(); },
          "Submitted inferences measured so far.")
      .def_property_readonly("waiting", &InferencePool::waiting,
                             "Jobs (submitted or blocking) waiting for an infer request now.")
      .def(
          "submit",
          [](InferencePool& pool, std::uint64_t token,
             std::vector<std::shared_ptr<Tensor>> inputs) {
            bool long_running = has_large_bytes_input(inputs);
            InferJob job{token, std::move(inputs), {}};
            if (long_running) {
              py::gil_scoped_release release;
              pool.submit(std::move(job));
            } else {
              // Numeric inputs are only wrapped, so submit takes microseconds; releasing the
              // GIL for that would only invite a hand-off to another Python thread (grpc's
              // poller) and a wait to take it back.
              pool.submit(std::move(job));
            }
          },
          py::arg("token"), py::arg("inputs"),
          "Start (or queue) inference on inputs in the model's input order; the result "
          "arrives through the pool's CompletionQueue under `token`.")
      .def(
          "infer",
          [](InferencePool& pool, std::vector<std::shared_ptr<Tensor>> inputs, bool release_gil) {
            if (!release_gil) {
              // A quick model (measured by the caller): handing the GIL away and taking it
              // back costs more than the inference when other threads want it.
              return pool.infer(inputs);
            }
            std::vector<std::shared_ptr<Tensor>> outputs;
            {
              py::gil_scoped_release release;
              // The pool gets a copy: `inputs` holds every Tensor until the GIL is back, so
              // the last reference to one over a Python buffer is never dropped without it.
              outputs = pool.infer(inputs);
            }
            return outputs;
          },
          py::arg("inputs"), py::arg("release_gil") = true,
          "Run inference on inputs in the model's input order and return the outputs in its "
          "output order, blocking this thread (and, with release_gil=False, the GIL): at once "
          "on an idle infer request, else after the jobs queued before it. Raises StatusError "
          "on failure.")
      .def("close", &InferencePool::close, py::call_guard<py::gil_scoped_release>(),
           "Fail waiting jobs, let running ones finish, refuse new ones; blocks until idle.");
}

}  // namespace ovmsx::bindings
