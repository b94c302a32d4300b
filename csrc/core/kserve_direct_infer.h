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
#include <string_view>
#include <utility>
#include <vector>

#include "core/inference_pool.h"
#include "core/kserve_request_reader.h"
#include "core/kserve_response_writer.h"
#include "core/model_source.h"
#include "core/tensor.h"

namespace ovmsx {

// A request read and checked, ready to run.
struct DirectPlan {
  std::string_view model_name;
  std::string_view id;
  std::vector<std::shared_ptr<Tensor>> inputs;  // views of the message, in model input order
  std::vector<std::size_t> order;               // model output indices, in response order
};

class DirectInfer {
 public:
  // `inputs` and `outputs` as the compiled model describes them; `version` as responses name it.
  DirectInfer(std::shared_ptr<InferencePool> pool, std::vector<PortInfo> inputs,
              std::vector<PortInfo> outputs, std::string version);

  // Reads and checks the request: nullopt declines it (see above). The plan views the
  // message, which must stay alive and unchanged until the plan has run.
  std::optional<DirectPlan> plan(const std::uint8_t* data, std::size_t size) const;

  // The response's fields before its outputs' data, and its whole size, when both are known
  // before inference (every output it holds has a static shape, none twice); nullopt
  // otherwise.
  struct StaticHead {
    std::string fields;  // fields 1-5
    std::size_t size;    // of the whole response
  };
  std::optional<StaticHead> static_head(const DirectPlan& plan) const;
  // Writes the whole response (head.size bytes) at `out`, OpenVINO writing the outputs in
  // place. Both run the inference, blocking this thread; a failure throws StatusError, as
  // InferencePool::infer does.
  void run_into(const DirectPlan& plan, const StaticHead& head, std::uint8_t* out) const;
  TensorResponse run(const DirectPlan& plan) const;
  // Like run_into, but submitted: OpenVINO fills `out` on its own thread, and the completion
  // arrives through the pool's CompletionQueue under `token`. The message and `out` must stay
  // alive until then.
  void submit_into(const DirectPlan& plan, const StaticHead& head, std::uint8_t* out,
                   std::uint64_t token) const;

 private:
  struct Input {
    std::string name;
    std::string datatype;
    std::size_t itemsize;
    bool rank_dynamic;
    std::vector<DimBounds> dims;
  };
  struct Output {
    std::string name;
    std::string datatype;
    std::optional<Shape> shape;  // when static
    std::size_t nbytes = 0;      // when static
  };
  // Writes the header and each output's tag and length; returns where each output goes.
  std::vector<std::uint8_t*> lay_out(const DirectPlan& plan, const StaticHead& head,
                                     std::uint8_t* out) const;

  std::shared_ptr<InferencePool> pool_;
  std::vector<Input> inputs_;         // the model's input order
  std::vector<Output> outputs_;       // the model's output order
  std::vector<std::size_t> by_name_;  // output indices in name order (OVMS's response order)
  std::string version_;
  bool usable_ = true;  // false when an input's datatype has no fixed element size
};

}  // namespace ovmsx
