#include "core/kserve_direct_infer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>
#include <utility>

#include "core/datatype.h"
#include "core/kserve_response_writer.h"
#include "core/kserve_wire.h"
#include "core/status.h"
#include "core/utf8.h"

namespace ovmsx {
namespace {

bool accepts(const std::vector<DimBounds>& dims, const Shape& shape) {
  if (dims.size() != shape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (shape[i] < dims[i].min || (dims[i].max != -1 && shape[i] > dims[i].max)) {
      return false;
    }
  }
  return true;
}

// product(shape) * itemsize, or nullopt on a negative dim or an overflow.
std::optional<std::size_t> byte_size(const Shape& shape, std::size_t itemsize) {
  std::size_t total = itemsize;
  for (const std::int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(total, static_cast<std::size_t>(dim), &total)) {
      return std::nullopt;
    }
  }
  return total;
}

// The element size of a datatype of the pyovms table; nullopt for BYTES, BF16 and custom
// datatypes, which the general path handles.
std::optional<std::size_t> fixed_itemsize(const std::string& datatype) {
  if (auto format = format_of_datatype(datatype)) {
    return format->itemsize;
  }
  return std::nullopt;
}

}  // namespace

DirectInfer::DirectInfer(std::shared_ptr<InferencePool> pool, std::vector<PortInfo> inputs,
                         std::vector<PortInfo> outputs, std::string version)
    : pool_(std::move(pool)), version_(std::move(version)) {
  for (auto& port : inputs) {
    const auto itemsize = fixed_itemsize(port.datatype);
    usable_ = usable_ && itemsize.has_value();
    inputs_.push_back(Input{std::move(port.name), std::move(port.datatype), itemsize.value_or(0),
                            port.rank_dynamic, std::move(port.dims)});
  }
  for (auto& port : outputs) {
    Output output{std::move(port.name), std::move(port.datatype), std::nullopt, 0};
    const auto itemsize = fixed_itemsize(output.datatype);
    const bool fixed = std::all_of(port.dims.begin(), port.dims.end(),
                                   [](const DimBounds& dim) { return dim.min == dim.max; });
    if (itemsize && !port.rank_dynamic && fixed) {
      Shape shape;
      for (const DimBounds& dim : port.dims) {
        shape.push_back(dim.min);
      }
      if (const auto nbytes = byte_size(shape, *itemsize)) {
        output.shape = std::move(shape);
        output.nbytes = *nbytes;
      }
    }
    outputs_.push_back(std::move(output));
  }
  by_name_.resize(outputs_.size());
  std::iota(by_name_.begin(), by_name_.end(), std::size_t{0});
  std::sort(by_name_.begin(), by_name_.end(),
            [&](std::size_t a, std::size_t b) { return outputs_[a].name < outputs_[b].name; });
}

std::optional<DirectPlan> DirectInfer::plan(const std::uint8_t* data, std::size_t size) const {
  if (!usable_) {
    return std::nullopt;
  }
  const std::optional<PlainRequest> read = read_plain_request(data, size);
  if (!read) {
    return std::nullopt;
  }
  const PlainRequest& parsed = *read;
  const std::size_t count = inputs_.size();
  if (count == 0 || parsed.inputs.size() != count || parsed.raw.size() != count ||
      !valid_utf8(parsed.id)) {
    return std::nullopt;
  }
  DirectPlan plan{parsed.model_name, parsed.id, std::vector<std::shared_ptr<Tensor>>(count), {}};
  // The model's inputs, each matched by name to exactly one of the request's.
  for (std::size_t i = 0; i < count; ++i) {
    const Input& port = inputs_[i];
    std::optional<std::size_t> found;
    for (std::size_t j = 0; j < count; ++j) {
      if (parsed.inputs[j].name == port.name) {
        if (found) {
          return std::nullopt;  // a repeated name: the general path decides which one counts
        }
        found = j;
      }
    }
    if (!found) {
      return std::nullopt;
    }
    const RequestedInput& given = parsed.inputs[*found];
    const ByteRange raw = parsed.raw[*found];
    if (given.datatype != port.datatype ||
        (!port.rank_dynamic && !accepts(port.dims, given.shape))) {
      return std::nullopt;
    }
    const auto expected = byte_size(given.shape, port.itemsize);
    if (!expected || *expected != raw.size) {
      return std::nullopt;
    }
    // No owner: the caller keeps the message alive until the plan has run, and the pool drops
    // its references to the inputs before infer() returns.
    plan.inputs[i] = Tensor::view(port.name, port.datatype, given.shape, data + raw.offset,
                                  raw.size, MemoryOwner());
  }
  if (parsed.outputs.empty()) {
    plan.order = by_name_;
  } else {
    for (const std::string_view name : parsed.outputs) {
      const auto at = std::find_if(outputs_.begin(), outputs_.end(),
                                   [&](const Output& output) { return output.name == name; });
      if (at == outputs_.end()) {
        return std::nullopt;
      }
      plan.order.push_back(static_cast<std::size_t>(at - outputs_.begin()));
    }
  }
  return plan;
}

std::optional<DirectInfer::StaticHead> DirectInfer::static_head(const DirectPlan& plan) const {
  std::vector<bool> seen(outputs_.size());
  std::size_t data = 0;
  for (const std::size_t index : plan.order) {
    const Output& output = outputs_[index];
    if (!output.shape || seen[index]) {
      return std::nullopt;
    }
    seen[index] = true;
    data += length_delimited_size(response_field::kRawOutputContents, output.nbytes);
  }
  StaticHead head{{}, 0};
  append_length_delimited(head.fields, response_field::kModelName, plan.model_name);
  append_length_delimited(head.fields, response_field::kModelVersion, version_);
  if (!plan.id.empty()) {
    append_length_delimited(head.fields, response_field::kId, plan.id);
  }
  for (const std::size_t index : plan.order) {
    const Output& output = outputs_[index];
    append_length_delimited(head.fields, response_field::kOutputs,
                            output_tensor_message(output.name, output.datatype, *output.shape));
  }
  head.size = head.fields.size() + data;
  return head;
}

std::vector<std::uint8_t*> DirectInfer::lay_out(const DirectPlan& plan, const StaticHead& head,
                                                std::uint8_t* out) const {
  std::memcpy(out, head.fields.data(), head.fields.size());
  out += head.fields.size();
  // Each output's payload goes right after its tag and length, where OpenVINO writes it.
  std::vector<std::uint8_t*> memory(outputs_.size(), nullptr);
  for (const std::size_t index : plan.order) {
    const std::size_t nbytes = outputs_[index].nbytes;
    std::uint8_t* payload = write_field_header(out, response_field::kRawOutputContents, nbytes);
    memory[index] = payload;
    out = payload + nbytes;
  }
  return memory;
}

void DirectInfer::run_into(const DirectPlan& plan, const StaticHead& head,
                           std::uint8_t* out) const {
  pool_->infer(plan.inputs, lay_out(plan, head, out));
}

void DirectInfer::submit_into(const DirectPlan& plan, const StaticHead& head, std::uint8_t* out,
                              std::uint64_t token) const {
  pool_->submit(InferJob{token, plan.inputs, lay_out(plan, head, out)});
}

TensorResponse DirectInfer::run(const DirectPlan& plan) const {
  std::vector<std::shared_ptr<Tensor>> outputs = pool_->infer(plan.inputs);
  std::vector<std::pair<std::string_view, std::shared_ptr<Tensor>>> named;
  for (const std::size_t index : plan.order) {
    named.emplace_back(outputs_[index].name, outputs[index]);
  }
  return TensorResponse(plan.model_name, version_, plan.id, std::nullopt, std::move(named));
}

}  // namespace ovmsx
