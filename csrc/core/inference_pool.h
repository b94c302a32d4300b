// A compiled model served from a fixed pool of infer requests (OVMS `nireq`).
//
// Two ways in, one FIFO. submit() never blocks: a job starts at once on an idle request, or
// waits in the FIFO until one finishes, and the finishing request starts it. Every submitted
// job ends as exactly one Completion pushed to the CompletionQueue, success or failure.
// infer() blocks its caller instead (a graph calculator on its own worker thread): on an idle
// request it runs the inference synchronously on the calling thread, since for small models a
// hand-off to another thread costs more than the inference; otherwise it waits in the same FIFO
// as submitted jobs, and its result goes to the blocked caller, never to the CompletionQueue.
//
// Threading: submit() and infer() may be called from any thread and never need the GIL; the
// binding releases it around infer(), which blocks. Callbacks run on OpenVINO's threads and
// never touch Python. A blocking caller whose run frees a request starts the next waiting job
// on that request (start_async; it does not wait for it).
//
// Outputs: a request with static output shapes writes into fresh memory that the response's
// Tensors then own, so a finished result never aliases the request's next run. Outputs whose
// shape is only known after inference are copied once out of the plugin's memory.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/infer_request.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/completion_queue.h"
#include "core/inference_timing.h"
#include "core/tensor.h"

namespace ovmsx {

struct InferJob {
  std::uint64_t token = 0;
  // One per model input, in the compiled model's input order.
  std::vector<std::shared_ptr<Tensor>> inputs;
  // Empty, or one per model output: where that output is written, if not null (the output
  // must have a static shape, and the memory hold it until the job completes). The output
  // Tensors then view it; the others get fresh memory.
  std::vector<std::uint8_t*> output_memory;
};

class InferencePool : public std::enable_shared_from_this<InferencePool> {
 public:
  // nireq == 0 takes OpenVINO's optimal number of infer requests for the compiled model.
  static std::shared_ptr<InferencePool> create(ov::CompiledModel model, std::size_t nireq,
                                               std::shared_ptr<CompletionQueue> completions);
  ~InferencePool();

  std::size_t size() const noexcept { return slots_.size(); }
  // Infer requests in use, and jobs (submitted or blocking) waiting for one: a snapshot.
  std::size_t active();
  std::size_t waiting();

  // Converts the inputs into ov::Tensors (zero-copy; strings unpacked), so a malformed input
  // raises StatusError here, to the caller; then starts or queues the job.
  void submit(InferJob job);

  // Runs one inference and returns its outputs in the model's output order; `inputs` are in
  // its input order. Blocks until done. Failures throw StatusError with the code and details
  // a submitted job would complete with. The caller keeps its own references to the inputs:
  // the pool lets go of its copies on this thread or OpenVINO's, before returning.
  std::vector<std::shared_ptr<Tensor>> infer(std::vector<std::shared_ptr<Tensor>> inputs,
                                             std::vector<std::uint8_t*> output_memory = {});

  // Retires the pool: waiting jobs fail at once with MODEL_VERSION_NOT_LOADED_ANYMORE (blocked
  // infer() callers throw it), running ones finish normally, wherever they run, and later
  // submits and infers fail the same way. Blocks until no inference runs; every job has then
  // completed. Idempotent; the destructor calls it.
  void close();

  // How long this pool's blocking inferences take, measured around infer() on the caller's
  // thread: the model's own time.
  const InferenceTiming& timing() const noexcept { return timing_; }
  // How long asynchronous inferences take from start to completion callback: the model's time
  // plus waking OpenVINO's thread, which under load can cost more than a small model's run.
  const InferenceTiming& round_trip_timing() const noexcept { return round_trip_timing_; }

 private:
  // Where a blocked infer() caller waits for the finishing request that runs its job.
  struct Waiter {
    std::mutex mutex;
    std::condition_variable ready;
    std::optional<Completion> done;
  };
  struct Slot {
    InferJob job;
    std::shared_ptr<Waiter> waiter;  // set when the running job belongs to a blocked caller
    std::vector<ov::Tensor> ov_inputs;
    // Set while a caller's thread runs request.infer(), whose callback must not count.
    std::atomic<bool> blocking{false};
    InferenceTiming::Clock::time_point started;  // of the running asynchronous inference
    // Last, so it is destroyed first: its destructor waits for a running inference, which
    // still reads the inputs above.
    ov::InferRequest request;
  };
  struct Pending {
    InferJob job;
    std::shared_ptr<Waiter> waiter;  // null for a submitted job
    std::vector<ov::Tensor> ov_inputs;
  };

  InferencePool(ov::CompiledModel model, std::shared_ptr<CompletionQueue> completions);
  // Checks the input count and converts the inputs (StatusError to the caller).
  Pending prepare(InferJob job) const;
  // Points the slot's request at the inputs, and at the job's output memory or fresh memory.
  void bind(Slot& slot, const std::vector<ov::Tensor>& inputs,
            const std::vector<std::uint8_t*>& output_memory);
  // Starts the job on an idle slot; on failure completes it with the error and returns false.
  bool try_start(std::size_t slot, Pending work);
  // Runs the job synchronously on this thread, on a slot it took idle, then frees the slot.
  Completion run_here(std::size_t slot, Pending work);
  // Gives a slot that just became free the oldest waiting job, or parks it as idle.
  void run_next_or_park(std::size_t slot);
  void on_done(std::size_t slot, std::exception_ptr error);
  void fail(InferJob job, std::shared_ptr<Waiter> waiter, StatusCode code, std::string details);
  // To the blocked caller if there is one, else to the CompletionQueue. Never throws.
  void deliver(Completion done, std::shared_ptr<Waiter> waiter) noexcept;
  std::vector<std::shared_ptr<Tensor>> collect_outputs(Slot& slot);

  ov::CompiledModel model_;
  std::shared_ptr<CompletionQueue> completions_;
  std::vector<ov::element::Type> input_types_;
  std::vector<std::string> output_names_;
  std::vector<bool> output_static_;
  std::vector<std::unique_ptr<Slot>> slots_;
  InferenceTiming timing_;
  InferenceTiming round_trip_timing_;

  std::mutex mutex_;  // guards idle_, pending_ and closing_
  // Signalled when a slot parks after close() began. A slot leaves idle_ for every run (async,
  // or blocking on a caller's thread, which request.wait() cannot see) and comes back when it
  // ends; once closing_ is set nothing takes one, so all of them parked means nothing runs.
  std::condition_variable parked_;
  bool closing_ = false;
  std::vector<std::size_t> idle_;
  std::deque<Pending> pending_;
};

}  // namespace ovmsx
