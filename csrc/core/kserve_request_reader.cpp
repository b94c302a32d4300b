#include "core/kserve_request_reader.h"

#include "core/protobuf_wire.h"
#include "core/status.h"

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

// Field numbers run from 1 to 2^29 - 1.
constexpr std::uint64_t kMaxFieldNumber = (std::uint64_t{1} << 29) - 1;

// Thrown inside this file only: the request is not a plain one.
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

PlainRequest read_request(const std::uint8_t* data, std::size_t size) {
  PlainRequest parsed;
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
        parsed.model_version = view_of(data, field);
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

std::optional<PlainRequest> read_plain_request(const std::uint8_t* data, std::size_t size) {
  try {
    return read_request(data, size);
  } catch (const Decline&) {
    return std::nullopt;
  } catch (const StatusError&) {  // malformed: the general path words the error
    return std::nullopt;
  }
}

}  // namespace ovmsx
