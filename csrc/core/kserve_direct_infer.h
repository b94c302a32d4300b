// ModelInfer for a quick model, whole, in C++: a serialized ModelInferRequest in, a serialized
// ModelInferResponse out, with no Python object built per request.
//
// Why: for a model that infers in microseconds, building protobuf objects, input wrappers and
// the answer in Python costs several times the inference, and it runs on gRPC's polling thread,
// which every request of the server shares.
//
// It answers only the plain case, and only when the general path (ovmsx/frontend/) would give
// the same answer: every input in raw_input_contents with exactly the model's names, datatypes
// and an accepted shape, no parameters, requested outputs by name only. Anything else — an
// error to report, typed contents, BYTES, parameters, an unusual encoding — is declined, and
// the general path answers it with its checks and OVMS's messages. So this file never words an
// error a client sees, except the inference's own failure, which both paths report alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/inference_pool.h"
#include "core/model_source.h"
#include "core/tensor.h"

namespace ovmsx {

// The model name and version a ModelInferRequest names (the last occurrence of each, as
// protobuf reads it), as byte ranges into the message; nullopt when the message is malformed
// or has a field of the wrong wire type there (the general path then reports it).
struct InferTarget {
  std::size_t name_offset = 0;
  std::size_t name_size = 0;
  std::size_t version_offset = 0;
  std::size_t version_size = 0;
};
std::optional<InferTarget> read_infer_target(const std::uint8_t* data, std::size_t size);

// A finished inference and the response header to send with its outputs.
class DirectAnswer {
 public:
  std::size_t size() const noexcept { return size_; }
  // Writes the whole serialized ModelInferResponse (size() bytes) at `out`.
  void write(std::uint8_t* out) const;

 private:
  friend class DirectInfer;
  std::string head_;  // fields 1-5 of ModelInferResponse
  std::vector<std::shared_ptr<Tensor>> outputs_;  // raw_output_contents, in response order
  std::size_t size_ = 0;
};

class DirectInfer {
 public:
  // `inputs` and `outputs` as the compiled model describes them; `version` as responses name it.
  DirectInfer(std::shared_ptr<InferencePool> pool, std::vector<PortInfo> inputs,
              std::vector<PortInfo> outputs, std::string version);

  // Runs the request if it is a plain one (see above), blocking this thread; nullopt declines.
  // The message must stay alive and unchanged until this returns: inputs are views of it.
  // An inference failure throws StatusError, as InferencePool::infer does.
  std::optional<DirectAnswer> answer(const std::uint8_t* data, std::size_t size) const;

 private:
  struct Input {
    std::string name;
    std::string datatype;
    std::size_t itemsize;
    bool rank_dynamic;
    std::vector<DimBounds> dims;
  };
  std::shared_ptr<InferencePool> pool_;
  std::vector<Input> inputs_;  // the model's input order
  std::vector<std::string> output_names_;  // the model's output order
  std::vector<std::size_t> by_name_;  // output indices in name order (OVMS's response order)
  std::string version_;
  bool usable_ = true;  // false when an input's datatype has no fixed element size
};

}  // namespace ovmsx
