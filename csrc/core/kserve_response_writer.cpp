#include "core/kserve_response_writer.h"

#include <cstring>

#include "core/kserve_wire.h"
#include "core/protobuf_wire.h"

namespace ovmsx {
namespace {

namespace output_field {  // InferOutputTensor
constexpr std::uint32_t kName = 1;
constexpr std::uint32_t kDatatype = 2;
constexpr std::uint32_t kShape = 3;
}  // namespace output_field
namespace entry_field {  // a map entry; InferParameter
constexpr std::uint32_t kKey = 1;
constexpr std::uint32_t kValue = 2;
constexpr std::uint32_t kInt64Param = 2;
}  // namespace entry_field

void append_varint(std::string& out, std::uint64_t value) {
  std::uint8_t buffer[10];
  const std::uint8_t* end = wire::write_varint(buffer, value);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(end - buffer));
}

void append_tag(std::string& out, std::uint32_t number, std::uint32_t wire_type) {
  append_varint(out, std::uint64_t{number} << 3 | wire_type);
}

// A proto3 string field: left out when empty.
void append_string(std::string& out, std::uint32_t number, std::string_view text) {
  if (!text.empty()) {
    append_length_delimited(out, number, text);
  }
}

}  // namespace

void append_length_delimited(std::string& out, std::uint32_t number, std::string_view payload) {
  append_tag(out, number, wire::kLengthDelimited);
  append_varint(out, payload.size());
  out.append(payload.data(), payload.size());
}

std::string output_tensor_message(std::string_view name, std::string_view datatype,
                                  const Shape& shape) {
  std::string fields;
  append_string(fields, output_field::kName, name);
  append_string(fields, output_field::kDatatype, datatype);
  if (!shape.empty()) {
    std::string packed;
    for (const std::int64_t dim : shape) {
      append_varint(packed, static_cast<std::uint64_t>(dim));
    }
    append_length_delimited(fields, output_field::kShape, packed);
  }
  return fields;
}

std::uint8_t* write_field_header(std::uint8_t* out, std::uint32_t number, std::size_t size) {
  out = wire::write_varint(out, std::uint64_t{number} << 3 | wire::kLengthDelimited);
  return wire::write_varint(out, size);
}

TensorResponse::TensorResponse(
    std::string_view model_name, std::string_view model_version, std::string_view id,
    std::optional<std::pair<std::string_view, std::int64_t>> parameter,
    std::vector<std::pair<std::string_view, std::shared_ptr<Tensor>>> outputs) {
  append_string(head_, response_field::kModelName, model_name);
  append_string(head_, response_field::kModelVersion, model_version);
  append_string(head_, response_field::kId, id);
  if (parameter) {
    // A map entry {key, InferParameter{int64_param}}; the oneof member is written even at 0.
    std::string value;
    append_tag(value, entry_field::kInt64Param, wire::kVarint);
    append_varint(value, static_cast<std::uint64_t>(parameter->second));
    std::string entry;
    append_length_delimited(entry, entry_field::kKey, parameter->first);
    append_length_delimited(entry, entry_field::kValue, value);
    append_length_delimited(head_, response_field::kParameters, entry);
  }
  for (auto& [name, tensor] : outputs) {
    append_length_delimited(head_, response_field::kOutputs,
                            output_tensor_message(name, tensor->datatype(), tensor->shape()));
    tensors_.push_back(std::move(tensor));
  }
  size_ = head_.size();
  for (const auto& tensor : tensors_) {
    size_ += length_delimited_size(response_field::kRawOutputContents, tensor->size());
  }
}

void TensorResponse::write(std::uint8_t* out) const {
  std::memcpy(out, head_.data(), head_.size());
  out += head_.size();
  for (const auto& tensor : tensors_) {
    out = write_length_delimited(out, response_field::kRawOutputContents, tensor->data(),
                                 tensor->size());
  }
}

}  // namespace ovmsx
