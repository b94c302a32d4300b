#include "core/inference_pool.h"

#include <string>
#include <tuple>
#include <utility>

#include "core/model_source.h"
#include "core/ov_tensor_adapter.h"
#include "core/status.h"

namespace ovmsx {
namespace {

std::pair<StatusCode, std::string> describe_error(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const StatusError& status) {
    return {status.code(), status.details()};
  } catch (const std::exception& other) {
    return {StatusCode::OV_INTERNAL_INFERENCE_ERROR, other.what()};
  } catch (...) {
    return {StatusCode::OV_INTERNAL_INFERENCE_ERROR, "unknown exception"};
  }
}

}  // namespace

std::shared_ptr<InferencePool> InferencePool::create(ov::CompiledModel model, std::size_t nireq,
                                                     std::shared_ptr<CompletionQueue> completions) {
  if (nireq == 0) {
    nireq = model.get_property(ov::optimal_number_of_infer_requests);
  }
  std::shared_ptr<InferencePool> pool(new InferencePool(std::move(model), std::move(completions)));
  for (std::size_t i = 0; i < nireq; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->request = pool->model_.create_infer_request();
    // The pool outlives its requests (the destructor waits for them), so `this` is safe here.
    InferencePool* raw = pool.get();
    slot->request.set_callback([raw, i](std::exception_ptr error) { raw->on_done(i, error); });
    pool->slots_.push_back(std::move(slot));
    pool->idle_.push_back(i);
  }
  return pool;
}

InferencePool::InferencePool(ov::CompiledModel model, std::shared_ptr<CompletionQueue> completions)
    : model_(std::move(model)), completions_(std::move(completions)) {
  for (const auto& input : model_.inputs()) {
    input_types_.push_back(input.get_element_type());
  }
  for (const auto& info : describe_ports(model_.outputs())) {
    output_names_.push_back(info.name);
  }
  for (const auto& output : model_.outputs()) {
    output_static_.push_back(output.get_partial_shape().is_static());
  }
}

InferencePool::~InferencePool() {
  close();
  // Requests go first: a callback still returning must find the mutex and queues alive.
  slots_.clear();
}

std::size_t InferencePool::active() {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size() - idle_.size();
}

std::size_t InferencePool::waiting() {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

void InferencePool::close() {
  std::deque<Pending> abandoned;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    abandoned.swap(pending_);
  }
  for (auto& work : abandoned) {
    fail(std::move(work.job), std::move(work.waiter), StatusCode::MODEL_VERSION_NOT_LOADED_ANYMORE,
         "");
  }
  {
    // Every run ends in run_next_or_park, which parks its slot now that closing_ is set: an
    // async one through on_done, a blocking one on its caller's thread.
    std::unique_lock<std::mutex> lock(mutex_);
    parked_.wait(lock, [this] { return idle_.size() == slots_.size(); });
  }
  // A callback that has just parked its slot may still be returning into OpenVINO; wait()
  // returns once it has. On a request that never ran, or whose run failed, wait() may throw:
  // nothing to wait for.
  for (auto& slot : slots_) {
    try {
      slot->request.wait();
    } catch (...) {
    }
  }
}

InferencePool::Pending InferencePool::prepare(InferJob job) const {
  if (job.inputs.size() != input_types_.size()) {
    throw StatusError(StatusCode::INTERNAL_ERROR,
                      "expected " + std::to_string(input_types_.size()) + " inputs, got " +
                          std::to_string(job.inputs.size()));
  }
  Pending work;
  work.ov_inputs.reserve(job.inputs.size());
  for (std::size_t i = 0; i < job.inputs.size(); ++i) {
    if (!job.inputs[i]) {
      throw StatusError(StatusCode::INTERNAL_ERROR, "input " + std::to_string(i) + " is None");
    }
    work.ov_inputs.push_back(to_ov_tensor(*job.inputs[i], input_types_[i]));
  }
  work.job = std::move(job);
  return work;
}

void InferencePool::submit(InferJob job) {
  Pending work = prepare(std::move(job));
  std::size_t slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      throw StatusError(StatusCode::MODEL_VERSION_NOT_LOADED_ANYMORE, "");
    }
    if (idle_.empty()) {
      pending_.push_back(std::move(work));
      return;
    }
    slot = idle_.back();
    idle_.pop_back();
  }
  if (!try_start(slot, std::move(work))) {
    run_next_or_park(slot);
  }
}

std::vector<std::shared_ptr<Tensor>> InferencePool::infer(
    std::vector<std::shared_ptr<Tensor>> inputs, std::vector<std::uint8_t*> output_memory) {
  if (!output_memory.empty() && output_memory.size() != output_static_.size()) {
    throw StatusError(StatusCode::INTERNAL_ERROR,
                      "output memory for " + std::to_string(output_memory.size()) +
                          " outputs, the model has " + std::to_string(output_static_.size()));
  }
  for (std::size_t i = 0; i < output_memory.size(); ++i) {
    if (output_memory[i] != nullptr && !output_static_[i]) {
      throw StatusError(StatusCode::INTERNAL_ERROR, "output memory for a dynamic output");
    }
  }
  Pending work = prepare(InferJob{0, std::move(inputs), std::move(output_memory)});
  std::size_t slot = 0;
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      throw StatusError(StatusCode::MODEL_VERSION_NOT_LOADED_ANYMORE, "");
    }
    if (idle_.empty()) {
      // Behind submitted jobs as well (one FIFO): a request that frees up starts this one,
      // and its callback hands the result over here.
      waiter = std::make_shared<Waiter>();
      work.waiter = waiter;
      pending_.push_back(std::move(work));
    } else {
      slot = idle_.back();
      idle_.pop_back();
    }
  }
  Completion done;
  if (waiter) {
    std::unique_lock<std::mutex> lock(waiter->mutex);
    waiter->ready.wait(lock, [&] { return waiter->done.has_value(); });
    done = std::move(*waiter->done);
  } else {
    done = run_here(slot, std::move(work));
  }
  if (done.code != StatusCode::OK) {
    throw StatusError(done.code, std::move(done.details));
  }
  return std::move(done.outputs);
}

void InferencePool::bind(Slot& slot, const std::vector<ov::Tensor>& inputs,
                         const std::vector<std::uint8_t*>& output_memory) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    slot.request.set_input_tensor(i, inputs[i]);
  }
  // Fresh output memory each run: the previous run's outputs now belong to its response.
  for (std::size_t i = 0; i < output_static_.size(); ++i) {
    if (output_static_[i]) {
      const auto& port = model_.output(i);
      std::uint8_t* memory = output_memory.empty() ? nullptr : output_memory[i];
      slot.request.set_output_tensor(
          i, memory != nullptr ? ov::Tensor(port.get_element_type(), port.get_shape(), memory)
                               : ov::Tensor(port.get_element_type(), port.get_shape()));
    }
  }
}

bool InferencePool::try_start(std::size_t index, Pending work) {
  Slot& slot = *slots_[index];
  slot.job = std::move(work.job);
  slot.waiter = std::move(work.waiter);
  try {
    bind(slot, work.ov_inputs, slot.job.output_memory);
    slot.ov_inputs = std::move(work.ov_inputs);
    slot.started = InferenceTiming::Clock::now();
    slot.request.start_async();
    return true;
  } catch (...) {
    auto [code, details] = describe_error(std::current_exception());
    slot.ov_inputs.clear();
    fail(std::exchange(slot.job, InferJob{}), std::move(slot.waiter), code, std::move(details));
    return false;
  }
}

Completion InferencePool::run_here(std::size_t index, Pending work) {
  Slot& slot = *slots_[index];
  Completion done;
  slot.blocking.store(true);
  try {
    bind(slot, work.ov_inputs, work.job.output_memory);
    const auto started = InferenceTiming::Clock::now();
    slot.request.infer();
    timing_.record(InferenceTiming::Clock::now() - started);
    done.outputs = collect_outputs(slot);
  } catch (...) {
    std::tie(done.code, done.details) = describe_error(std::current_exception());
  }
  slot.blocking.store(false);
  done.inputs = std::move(work.job.inputs);
  run_next_or_park(index);
  return done;
}

void InferencePool::run_next_or_park(std::size_t slot) {
  for (;;) {
    Pending work;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closing_ || pending_.empty()) {
        idle_.push_back(slot);
        if (closing_) {
          parked_.notify_all();
        }
        return;
      }
      work = std::move(pending_.front());
      pending_.pop_front();
    }
    if (try_start(slot, std::move(work))) {
      return;
    }
  }
}

void InferencePool::on_done(std::size_t index, std::exception_ptr error) {
  Slot& slot = *slots_[index];
  if (slot.blocking.load()) {
    // A synchronous infer() does not call back (IAsyncInferRequest::infer disables the
    // callback; the CPU plugin's single-stream infer bypasses it), and its caller completes
    // the job. Should a plugin call back anyway, the slot is not this callback's to free.
    return;
  }
  Completion done;
  done.token = slot.job.token;
  if (error) {
    auto [code, details] = describe_error(error);
    done.code = code;
    done.details = std::move(details);
  } else {
    round_trip_timing_.record(InferenceTiming::Clock::now() - slot.started);
    try {
      done.outputs = collect_outputs(slot);
    } catch (...) {
      auto [code, details] = describe_error(std::current_exception());
      done.code = code;
      done.details = std::move(details);
    }
  }
  done.inputs = std::move(slot.job.inputs);
  slot.job = InferJob{};
  slot.ov_inputs.clear();
  deliver(std::move(done), std::move(slot.waiter));
  // OpenVINO marks the request idle before calling back, so it may start again from here.
  run_next_or_park(index);
}

void InferencePool::fail(InferJob job, std::shared_ptr<Waiter> waiter, StatusCode code,
                         std::string details) {
  Completion done;
  done.token = job.token;
  done.code = code;
  done.details = std::move(details);
  done.inputs = std::move(job.inputs);
  deliver(std::move(done), std::move(waiter));
}

void InferencePool::deliver(Completion done, std::shared_ptr<Waiter> waiter) noexcept {
  try {
    if (waiter) {
      std::lock_guard<std::mutex> lock(waiter->mutex);
      waiter->done = std::move(done);
      waiter->ready.notify_one();
    } else {
      completions_->push(std::move(done));
    }
  } catch (...) {
    // Out of memory: the job is lost, but its slot must not be (nothing may escape into
    // OpenVINO's thread either).
  }
}

std::vector<std::shared_ptr<Tensor>> InferencePool::collect_outputs(Slot& slot) {
  std::vector<std::shared_ptr<Tensor>> outputs;
  outputs.reserve(output_names_.size());
  for (std::size_t i = 0; i < output_names_.size(); ++i) {
    ov::Tensor value = slot.request.get_output_tensor(i);
    if (!output_static_[i] && value.get_element_type() != ov::element::string) {
      // The plugin may reuse this memory on the request's next run. (An empty tensor has
      // nothing to copy, and OpenVINO's copy_to does not accept one.)
      ov::Tensor copy(value.get_element_type(), value.get_shape());
      if (value.get_size() != 0) {
        value.copy_to(copy);
      }
      value = copy;
    }
    outputs.push_back(from_ov_tensor(output_names_[i], value));
  }
  return outputs;
}

}  // namespace ovmsx
