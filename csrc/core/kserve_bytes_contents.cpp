#include "core/kserve_bytes_contents.h"

#include <limits>

#include "core/bytes_codec.h"
#include "core/protobuf_wire.h"

namespace ovmsx {
namespace {

using wire::kLengthDelimited;
using wire::Reader;

constexpr std::uint64_t kInputs = 5;         // ModelInferRequest.inputs
constexpr std::uint64_t kContents = 5;       // InferInputTensor.contents
constexpr std::uint64_t kBytesContents = 8;  // InferTensorContents.bytes_contents

// One field as read: its number, wire type, where it starts and, if length-delimited, where its
// payload lies.
struct Field {
  std::uint64_t number;
  std::uint32_t wire_type;
  std::size_t start;
  std::size_t payload;
  std::size_t payload_size;
  std::size_t end;

  bool is(std::uint64_t field_number) const {
    return number == field_number && wire_type == kLengthDelimited;
  }
};

Field next_field(Reader& reader) {
  Field field{};
  field.start = reader.pos();
  const std::uint64_t tag = reader.varint();
  field.number = tag >> 3;
  field.wire_type = static_cast<std::uint32_t>(tag & 7);
  if (field.wire_type == kLengthDelimited) {
    const std::uint64_t length = reader.varint();
    field.payload = reader.pos();
    reader.skip(length);
    field.payload_size = static_cast<std::size_t>(length);
  } else {
    reader.skip_value(field.wire_type);
  }
  field.end = reader.pos();
  return field;
}

// Calls visit(offset, size) for every bytes_contents element of one InferInputTensor payload.
template <typename Visit>
void for_each_element(const Reader& message, std::size_t offset, std::size_t size, Visit visit) {
  Reader tensor = message.nested(offset, size);
  while (!tensor.done()) {
    const Field contents = next_field(tensor);
    if (!contents.is(kContents)) {
      continue;
    }
    Reader values = message.nested(offset + contents.payload, contents.payload_size);
    while (!values.done()) {
      const Field element = next_field(values);
      if (element.is(kBytesContents)) {
        if (element.payload_size > std::numeric_limits<std::uint32_t>::max()) {
          values.malformed("bytes_contents element longer than a BYTES length prefix allows");
        }
        visit(offset + contents.payload + element.payload, element.payload_size);
      }
    }
  }
}

void append_varint(std::string& out, std::uint64_t value) {
  std::uint8_t buffer[10];
  const std::uint8_t* end = wire::write_varint(buffer, value);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(end - buffer));
}

void append_length_delimited(std::string& out, std::uint64_t number, const std::string& payload) {
  append_varint(out, number << 3 | kLengthDelimited);
  append_varint(out, payload.size());
  out += payload;
}

// `data[from, to)` without its length-delimited fields numbered `number`.
std::string without(const std::uint8_t* data, std::size_t from, std::size_t to,
                    std::uint64_t number) {
  std::string kept;
  Reader reader(data + from, to - from);
  while (!reader.done()) {
    const Field field = next_field(reader);
    if (!field.is(number)) {
      kept.append(reinterpret_cast<const char*>(data) + from + field.start,
                  field.end - field.start);
    }
  }
  return kept;
}

// An InferInputTensor payload whose contents have lost their bytes_contents.
std::string tensor_without_strings(const std::uint8_t* data, std::size_t offset, std::size_t size) {
  std::string kept;
  Reader reader(data + offset, size);
  while (!reader.done()) {
    const Field field = next_field(reader);
    const char* start = reinterpret_cast<const char*>(data) + offset + field.start;
    if (field.is(kContents)) {
      const std::size_t payload = offset + field.payload;
      append_length_delimited(kept, kContents,
                              without(data, payload, payload + field.payload_size, kBytesContents));
    } else {
      kept.append(start, field.end - field.start);
    }
  }
  return kept;
}

}  // namespace

std::vector<BytesContents> scan_bytes_contents(const std::uint8_t* data, std::size_t size) {
  std::vector<BytesContents> found;
  Reader request(data, size);
  std::size_t input = 0;
  while (!request.done()) {
    const Field field = next_field(request);
    if (!field.is(kInputs)) {
      continue;
    }
    BytesContents strings{input++, 0, 0};
    for_each_element(request, field.payload, field.payload_size,
                     [&](std::size_t, std::size_t length) {
                       ++strings.count;
                       strings.packed_size += kBytesPrefix + length;
                     });
    if (strings.count != 0) {
      found.push_back(strings);
    }
  }
  return found;
}

std::string cut_bytes_contents(const std::uint8_t* data, std::size_t size,
                               const std::vector<std::uint8_t*>& outputs) {
  std::string rest;
  Reader request(data, size);
  std::size_t next_output = 0;
  while (!request.done()) {
    const Field field = next_field(request);
    std::uint8_t* out = nullptr;
    if (field.is(kInputs)) {
      for_each_element(request, field.payload, field.payload_size,
                       [&](std::size_t offset, std::size_t length) {
                         if (out == nullptr) {
                           out = outputs.at(next_output++);
                         }
                         out = pack_element(data + offset, length, out);
                       });
    }
    if (out != nullptr) {
      append_length_delimited(rest, kInputs,
                              tensor_without_strings(data, field.payload, field.payload_size));
    } else {
      rest.append(reinterpret_cast<const char*>(data) + field.start, field.end - field.start);
    }
  }
  return rest;
}

}  // namespace ovmsx
