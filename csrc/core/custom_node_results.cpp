#include "core/custom_node_results.h"

#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "core/custom_node_precision.h"
#include "core/status.h"
#include "core/utf8.h"

namespace ovmsx {
namespace {

static_assert(sizeof(std::size_t) == sizeof(std::uint64_t),
              "dataBytes (uint64_t) is used as a size_t byte count");

constexpr std::uint64_t kMaxDim = std::numeric_limits<std::int64_t>::max();

// Holds one output buffer of a library and gives it back when the last Tensor viewing it
// dies. It keeps the node state alive: release takes the manager, which deinitialize ends.
class OutputMemory {
 public:
  OutputMemory(std::shared_ptr<const CustomNodeState> state, void* data)
      : state_(std::move(state)), data_(data) {}
  ~OutputMemory() { state_->release(data_); }
  OutputMemory(const OutputMemory&) = delete;
  OutputMemory& operator=(const OutputMemory&) = delete;

 private:
  std::shared_ptr<const CustomNodeState> state_;
  void* data_;
};

std::string dims_to_string(const std::uint64_t* dims, std::uint64_t count) {
  std::string text = "(";
  for (std::uint64_t i = 0; i < count; ++i) {
    text += (i ? "," : "") + std::to_string(dims[i]);
  }
  return text + ")";
}

// product(dims) * itemsize, or nullopt when that, or a dim, does not fit the signed 64 bits
// of a Shape. COMPAT §1.3 quirk: OVMS multiplies in an int and wraps; here nothing wraps.
std::optional<std::uint64_t> expected_bytes(const std::uint64_t* dims, std::uint64_t count,
                                            std::size_t itemsize) {
  std::uint64_t bytes = itemsize;  // dimsCount == 0 is a scalar: one element
  for (std::uint64_t i = 0; i < count; ++i) {
    if (dims[i] > kMaxDim || __builtin_mul_overflow(bytes, dims[i], &bytes)) {
      return std::nullopt;
    }
  }
  return bytes;
}

// A name that is not UTF-8 is not quoted: the message must reach Python (and clients) as text.
std::string output_label(const CustomNodeTensor& output, int index) {
  if (output.name == nullptr) {
    return "#" + std::to_string(index) + " (no name)";
  }
  return valid_utf8(output.name) ? std::string(output.name)
                                 : "#" + std::to_string(index) + " (name not UTF-8)";
}

std::shared_ptr<Tensor> convert_output(const std::shared_ptr<const CustomNodeState>& state,
                                       const CustomNodeTensor& output, int index) {
  // COMPAT §1.3 step 5: dims go back right after conversion, whatever its outcome.
  ReleaseOnExit dims_guard(*state, output.dims);
  // The data goes back when its owner dies: with the last Tensor, or here if conversion fails.
  MemoryOwner owner;
  if (output.data != nullptr) {
    ReleaseOnExit data_guard(*state, output.data);
    owner = std::make_shared<OutputMemory>(state, output.data);
    data_guard.dismiss();
  }
  const std::string label = output_label(output, index);
  const auto element = element_of_precision(output.precision);
  if (!element) {
    throw StatusError(StatusCode::NODE_LIBRARY_INVALID_PRECISION, "output: " + label);
  }
  if (output.dims == nullptr && output.dimsCount > 0) {
    throw StatusError(
        StatusCode::NODE_LIBRARY_INVALID_CONTENT_SIZE,
        "dims is NULL but dimsCount is " + std::to_string(output.dimsCount) + "; output: " + label);
  }
  const auto expected = expected_bytes(output.dims, output.dimsCount, element->itemsize);
  if (output.data == nullptr || !expected || *expected != output.dataBytes) {
    const std::string expected_text =
        expected ? std::to_string(*expected) + " bytes"
                 : "dims " + dims_to_string(output.dims, output.dimsCount) + " overflow 64 bits";
    const std::string actual_text =
        output.data ? std::to_string(output.dataBytes) + " bytes" : "no data (NULL)";
    throw StatusError(
        StatusCode::NODE_LIBRARY_INVALID_CONTENT_SIZE,
        "Expected: " + expected_text + "; Actual: " + actual_text + "; output: " + label);
  }
  // Tensor names become Python str, which holds UTF-8 only.
  if (output.name == nullptr || !valid_utf8(output.name)) {
    throw StatusError(StatusCode::NODE_LIBRARY_OUTPUT_MISSING_NAME, "output: " + label);
  }
  Shape shape(output.dims, output.dims + output.dimsCount);
  return Tensor::view(output.name, std::string(element->datatype), std::move(shape), output.data,
                      output.dataBytes, std::move(owner));
}

// Every refusal names the function and the library, as the checks before the entries do.
TensorInfo convert_info(const CustomNodeTensorInfo& entry, const char* function,
                        const std::string& path) {
  const auto refuse = [&](const std::string& what) {
    return StatusError(StatusCode::NODE_LIBRARY_METADATA_FAILED,
                       std::string(function) + " returned " + what + "; library: " + path);
  };
  if (!valid_utf8(entry.name)) {  // (it becomes a Python str)
    throw refuse("a name that is not UTF-8");
  }
  if (entry.dims == nullptr && entry.dimsCount > 0) {
    throw refuse(std::string("NULL dims for ") + entry.name);
  }
  TensorInfo info{entry.name, "", {}};
  if (const auto element = element_of_precision(entry.precision)) {
    info.datatype = element->datatype;
  }
  info.shape.reserve(entry.dimsCount);
  for (std::uint64_t i = 0; i < entry.dimsCount; ++i) {
    if (entry.dims[i] > kMaxDim) {
      throw refuse("dims " + dims_to_string(entry.dims, entry.dimsCount) + " for " + entry.name);
    }
    // COMPAT §1.3: a dim of 0 means "any size", which KServe metadata shows as -1.
    info.shape.push_back(entry.dims[i] == 0 ? -1 : static_cast<std::int64_t>(entry.dims[i]));
  }
  return info;
}

}  // namespace

std::vector<TensorInfo> take_tensor_infos(const CustomNodeState& state, const char* function,
                                          int rc, CustomNodeTensorInfo* info, int count) {
  const std::string& path = state.loaded_library().path();
  if (rc != 0) {
    throw StatusError(
        StatusCode::NODE_LIBRARY_METADATA_FAILED,
        std::string(function) + " returned " + std::to_string(rc) + "; library: " + path);
  }
  if (info == nullptr) {
    throw StatusError(StatusCode::NODE_LIBRARY_OUTPUTS_CORRUPTED,
                      std::string(function) + " returned NULL info; library: " + path);
  }
  ReleaseOnExit array_guard(state, info);  // after every entry's dims
  if (count <= 0) {
    throw StatusError(StatusCode::NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,
                      std::string(function) + " returned infoCount " + std::to_string(count) +
                          "; library: " + path);
  }
  std::vector<TensorInfo> infos;
  std::exception_ptr first_error;
  for (int i = 0; i < count; ++i) {
    ReleaseOnExit dims_guard(state, info[i].dims);
    if (info[i].name == nullptr || first_error) {
      continue;  // OVMS skips unnamed entries; after an error only releasing is left to do
    }
    try {
      infos.push_back(convert_info(info[i], function, path));
    } catch (...) {
      first_error = std::current_exception();
    }
  }
  if (first_error) {
    std::rethrow_exception(first_error);
  }
  return infos;
}

std::vector<std::shared_ptr<Tensor>> take_outputs(
    const std::shared_ptr<const CustomNodeState>& state, int rc, CustomNodeTensor* outputs,
    int count) {
  const std::string& path = state->loaded_library().path();
  if (rc != 0) {
    // COMPAT §1.3 step 1: a failed execute cleans up after itself; nothing is released.
    throw StatusError(StatusCode::NODE_LIBRARY_EXECUTION_FAILED,
                      "execute returned " + std::to_string(rc) + "; library: " + path);
  }
  if (outputs == nullptr) {
    throw StatusError(StatusCode::NODE_LIBRARY_OUTPUTS_CORRUPTED,
                      "execute returned NULL outputs; library: " + path);
  }
  ReleaseOnExit array_guard(*state, outputs);  // the array goes back last (step 5)
  if (count <= 0) {
    throw StatusError(
        StatusCode::NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT,
        "execute returned outputsCount " + std::to_string(count) + "; library: " + path);
  }
  std::vector<std::shared_ptr<Tensor>> tensors;
  std::exception_ptr first_error;
  // Step 4: every output is visited, so that each pointer is released, and the first error wins.
  for (int i = 0; i < count; ++i) {
    try {
      std::shared_ptr<Tensor> tensor = convert_output(state, outputs[i], i);
      if (!first_error) {
        tensors.push_back(std::move(tensor));
      }
    } catch (...) {
      if (!first_error) {
        first_error = std::current_exception();
      }
    }
  }
  if (first_error) {
    tensors.clear();  // their data goes back now, before the array
    std::rethrow_exception(first_error);
  }
  return tensors;
}

}  // namespace ovmsx
