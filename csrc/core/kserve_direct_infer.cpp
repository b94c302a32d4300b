#include "core/kserve_direct_infer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>
#include <utility>

#include "core/datatype.h"
#include "core/kserve_wire.h"
#include "core/protobuf_wire.h"
#include "core/status.h"
#include "core/utf8.h"

namespace ovmsx {
namespace {

using wire::kLengthDelimited;
using wire::kVarint;
using wire::Reader;

// Field numbers of grpc_predict_v2.proto.
namespace request {
constexpr std::uint64_t kModelName = 1;
constexpr std::uint64_t kModelVersion = 2;
constexpr std::uint64_t kId = 3;
constexpr std::uint64_t kParameters = 4;
constexpr std::uint64_t kInputs = 5;
constexpr std::uint64_t kOutputs = 6;
constexpr std::uint64_t kRawInputContents = 7;
}  // namespace request
namespace tensor {  // InferInputTensor, InferOutputTensor, InferRequestedOutputTensor
constexpr std::uint64_t kName = 1;
constexpr std::uint64_t kDatatype = 2;
constexpr std::uint64_t kShape = 3;
constexpr std::uint64_t kInputParameters = 4;
constexpr std::uint64_t kContents = 5;
constexpr std::uint64_t kRequestedOutputParameters = 2;
}  // namespace tensor
namespace response {
constexpr std::uint32_t kModelName = 1;
constexpr std::uint32_t kModelVersion = 2;
constexpr std::uint32_t kId = 3;
constexpr std::uint32_t kOutputs = 5;
constexpr std::uint32_t kRawOutputContents = 6;
}  // namespace response

// Field numbers run from 1 to 2^29 - 1.
constexpr std::uint64_t kMaxFieldNumber = (std::uint64_t{1} << 29) - 1;

// Thrown inside this file only: the request is not one the direct path answers.
struct Decline {};

struct Field {
  std::uint64_t number;
  std::uint32_t wire_type;
  std::size_t payload;       // length-delimited: where the payload starts (message offset)
  std::size_t payload_size;  // length-delimited: its size
  std::uint64_t value;       // varint: its value
};

// Reads the next field of `reader`, whose data starts at `base` in the whole message.
Field next_field(Reader& reader, std::size_t base) {
  Field field{};
  const std::uint64_t tag = reader.varint();
  field.number = tag >> 3;
  field.wire_type = static_cast<std::uint32_t>(tag & 7);
  if (field.number == 0 || field.number > kMaxFieldNumber) {
    reader.malformed("invalid field number");  // protobuf refuses the message
  }
  if (field.wire_type == kLengthDelimited) {
    const std::uint64_t length = reader.varint();
    field.payload = base + reader.pos();
    reader.skip(length);
    field.payload_size = static_cast<std::size_t>(length);
  } else if (field.wire_type == kVarint) {
    field.value = reader.varint();
  } else {
    reader.skip_value(field.wire_type);
  }
  return field;
}

void expect_length_delimited(const Field& field) {
  if (field.wire_type != kLengthDelimited) {
    throw Decline{};  // protobuf's reading of a mistyped field is for the general path to give
  }
}

struct RequestedInput {
  std::string_view name;
  std::string_view datatype;
  Shape shape;
};

struct Request {
  std::string_view model_name;
  std::string_view id;
  std::vector<RequestedInput> inputs;
  std::vector<std::string_view> outputs;
  std::vector<ByteRange> raw;
};

std::string_view view_of(const std::uint8_t* data, const Field& field) {
  return {reinterpret_cast<const char*>(data) + field.payload, field.payload_size};
}

void read_shape(const Reader& message, const Field& field, Shape& shape) {
  if (field.wire_type == kVarint) {
    shape.push_back(static_cast<std::int64_t>(field.value));
    return;
  }
  expect_length_delimited(field);  // packed
  Reader values = message.nested(field.payload, field.payload_size);
  while (!values.done()) {
    shape.push_back(static_cast<std::int64_t>(values.varint()));
  }
}

RequestedInput read_input(const std::uint8_t* data, const Reader& message, const Field& outer) {
  RequestedInput input;
  Reader reader = message.nested(outer.payload, outer.payload_size);
  while (!reader.done()) {
    const Field field = next_field(reader, outer.payload);
    switch (field.number) {
      case tensor::kName:
        expect_length_delimited(field);
        input.name = view_of(data, field);
        break;
      case tensor::kDatatype:
        expect_length_delimited(field);
        input.datatype = view_of(data, field);
        break;
      case tensor::kShape:
        read_shape(message, field, input.shape);
        break;
      case tensor::kInputParameters:
      case tensor::kContents:
        throw Decline{};
      default:
        break;  // unknown fields are skipped, as protobuf does
    }
  }
  return input;
}

std::string_view read_requested_output(const std::uint8_t* data, const Reader& message,
                                       const Field& outer) {
  std::string_view name;
  Reader reader = message.nested(outer.payload, outer.payload_size);
  while (!reader.done()) {
    const Field field = next_field(reader, outer.payload);
    if (field.number == tensor::kName) {
      expect_length_delimited(field);
      name = view_of(data, field);
    } else if (field.number == tensor::kRequestedOutputParameters) {
      throw Decline{};
    }
  }
  return name;
}

Request read_request(const std::uint8_t* data, std::size_t size) {
  Request parsed;
  const Reader message(data, size);
  Reader reader(data, size);
  while (!reader.done()) {
    const Field field = next_field(reader, 0);
    switch (field.number) {
      case request::kModelName:
        expect_length_delimited(field);
        parsed.model_name = view_of(data, field);
        break;
      case request::kModelVersion:
        expect_length_delimited(field);
        break;
      case request::kId:
        expect_length_delimited(field);
        parsed.id = view_of(data, field);
        break;
      case request::kParameters:
        throw Decline{};
      case request::kInputs:
        expect_length_delimited(field);
        parsed.inputs.push_back(read_input(data, message, field));
        break;
      case request::kOutputs:
        expect_length_delimited(field);
        parsed.outputs.push_back(read_requested_output(data, message, field));
        break;
      case request::kRawInputContents:
        expect_length_delimited(field);
        parsed.raw.push_back(ByteRange{field.payload, field.payload_size});
        break;
      default:
        break;
    }
  }
  return parsed;
}

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

void append_varint(std::string& out, std::uint64_t value) {
  std::uint8_t buffer[10];
  const std::uint8_t* end = wire::write_varint(buffer, value);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(end - buffer));
}

void append_string(std::string& out, std::uint32_t number, std::string_view text) {
  append_varint(out, std::uint64_t{number} << 3 | kLengthDelimited);
  append_varint(out, text.size());
  out.append(text.data(), text.size());
}

std::string output_tensor(std::string_view name, std::string_view datatype, const Shape& shape) {
  std::string fields;
  append_string(fields, tensor::kName, name);
  append_string(fields, tensor::kDatatype, datatype);
  if (!shape.empty()) {
    std::string packed;
    for (const std::int64_t dim : shape) {
      append_varint(packed, static_cast<std::uint64_t>(dim));
    }
    append_string(fields, tensor::kShape, packed);
  }
  return fields;
}

// Writes the tag and length of a length-delimited field of `size` bytes; returns where its
// payload goes.
std::uint8_t* write_field_header(std::uint8_t* out, std::uint32_t number, std::size_t size) {
  out = wire::write_varint(out, std::uint64_t{number} << 3 | kLengthDelimited);
  return wire::write_varint(out, size);
}

}  // namespace

std::optional<InferTarget> read_infer_target(const std::uint8_t* data, std::size_t size) {
  InferTarget target;
  try {
    Reader reader(data, size);
    while (!reader.done()) {
      const Field field = next_field(reader, 0);
      if (field.number == request::kModelName || field.number == request::kModelVersion) {
        if (field.wire_type != kLengthDelimited) {
          return std::nullopt;
        }
        if (field.number == request::kModelName) {
          target.name_offset = field.payload;
          target.name_size = field.payload_size;
        } else {
          target.version_offset = field.payload;
          target.version_size = field.payload_size;
        }
      }
    }
  } catch (const StatusError&) {
    return std::nullopt;
  }
  return target;
}

void DirectAnswer::write(std::uint8_t* out) const {
  std::memcpy(out, head_.data(), head_.size());
  out += head_.size();
  for (const auto& output : outputs_) {
    out = write_length_delimited(out, response::kRawOutputContents, output->data(), output->size());
  }
}

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
  Request parsed;
  try {
    parsed = read_request(data, size);
  } catch (const Decline&) {
    return std::nullopt;
  } catch (const StatusError&) {  // malformed: the general path words the error
    return std::nullopt;
  }
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

template <typename Describe>
std::string DirectInfer::head(const DirectPlan& plan, Describe describe) const {
  std::string fields;
  append_string(fields, response::kModelName, plan.model_name);
  append_string(fields, response::kModelVersion, version_);
  if (!plan.id.empty()) {
    append_string(fields, response::kId, plan.id);
  }
  for (const std::size_t index : plan.order) {
    const auto [datatype, shape] = describe(index);
    append_string(fields, response::kOutputs,
                  output_tensor(outputs_[index].name, datatype, *shape));
  }
  return fields;
}

std::pair<std::string_view, const Shape*> DirectInfer::static_fields(std::size_t index) const {
  return {outputs_[index].datatype, &*outputs_[index].shape};
}

std::optional<std::size_t> DirectInfer::static_size(const DirectPlan& plan) const {
  std::vector<bool> seen(outputs_.size());
  std::size_t total = 0;
  for (const std::size_t index : plan.order) {
    const Output& output = outputs_[index];
    if (!output.shape || seen[index]) {
      return std::nullopt;
    }
    seen[index] = true;
    total += length_delimited_size(response::kRawOutputContents, output.nbytes);
  }
  return total + head(plan, [&](std::size_t index) { return static_fields(index); }).size();
}

std::vector<std::uint8_t*> DirectInfer::lay_out(const DirectPlan& plan, std::uint8_t* out) const {
  const std::string fields = head(plan, [&](std::size_t index) { return static_fields(index); });
  std::memcpy(out, fields.data(), fields.size());
  out += fields.size();
  // Each output's payload goes right after its tag and length, where OpenVINO writes it.
  std::vector<std::uint8_t*> memory(outputs_.size(), nullptr);
  for (const std::size_t index : plan.order) {
    const std::size_t nbytes = outputs_[index].nbytes;
    std::uint8_t* payload = write_field_header(out, response::kRawOutputContents, nbytes);
    memory[index] = payload;
    out = payload + nbytes;
  }
  return memory;
}

void DirectInfer::run_into(const DirectPlan& plan, std::uint8_t* out) const {
  pool_->infer(plan.inputs, lay_out(plan, out));
}

void DirectInfer::submit_into(const DirectPlan& plan, std::uint8_t* out,
                              std::uint64_t token) const {
  pool_->submit(InferJob{token, plan.inputs, lay_out(plan, out)});
}

DirectAnswer DirectInfer::run(const DirectPlan& plan) const {
  std::vector<std::shared_ptr<Tensor>> outputs = pool_->infer(plan.inputs);
  DirectAnswer answer;
  answer.head_ = head(plan, [&](std::size_t index) {
    return std::make_pair(std::string_view(outputs[index]->datatype()), &outputs[index]->shape());
  });
  answer.size_ = answer.head_.size();
  for (const std::size_t index : plan.order) {
    answer.size_ += length_delimited_size(response::kRawOutputContents, outputs[index]->size());
    answer.outputs_.push_back(outputs[index]);
  }
  return answer;
}

}  // namespace ovmsx
