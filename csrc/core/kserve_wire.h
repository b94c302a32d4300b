// The two places where ovmsx reads and writes KServe v2 messages at the protobuf wire level
// (protobuf "Encoding": tag = field_number << 3 | wire_type, lengths as varints).
//
// Python protobuf copies every bytes field it parses or sets. For raw_input_contents (field 7
// of ModelInferRequest) and raw_output_contents (field 6 of ModelInferResponse), which hold all
// of a request's tensor data, that would be two to three copies per request. So the frontend
// parses and builds everything else with protobuf, and only these repeated bytes fields are
// cut out of the request (as views) and appended to the response (one copy) here. Both rely
// on protobuf's rule that fields may come in any order and that a repeated field's occurrences
// concatenate, so "message without the field" + "the field's occurrences" is the same message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ovmsx {

struct ByteRange {
  std::size_t offset;
  std::size_t size;
};

struct FieldSplit {
  std::vector<ByteRange> payloads;  // every occurrence of the field, in order
  std::string rest;  // all other fields, byte for byte; empty when `payloads` is (then the
                     // message itself is the rest, and copying it would be wasted)
};

// Separates the length-delimited field `field_number` from a serialized message. A malformed
// message raises StatusError(INVALID_INPUT_FORMAT) naming the byte offset; nothing is read
// outside [data, data + size).
FieldSplit split_length_delimited(const std::uint8_t* data, std::size_t size,
                                  std::uint32_t field_number);

// Bytes taken by one occurrence of a length-delimited field with a payload of `size` bytes.
std::size_t length_delimited_size(std::uint32_t field_number, std::size_t size);

// Writes one occurrence (tag, length, payload) at `out`; returns the end of what it wrote.
std::uint8_t* write_length_delimited(std::uint8_t* out, std::uint32_t field_number,
                                     const std::uint8_t* payload, std::size_t size);

}  // namespace ovmsx
