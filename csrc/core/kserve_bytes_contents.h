// Typed BYTES data of a KServe request (ModelInferRequest.inputs[i].contents.bytes_contents),
// read at the protobuf wire level.
//
// Why: protobuf gives every element of a repeated bytes field an object of its own (Python's
// upb: a 16-byte view each in its arena, then a bytes object each when read), so ten million
// empty strings, 20 MB on the wire, took over 400 MB once parsed. Cut out here instead, they
// become one buffer in the KServe BYTES layout (4-byte little-endian length, then the bytes;
// see bytes_codec.h), which is what models and graphs take anyway and is at most twice the
// elements' size on the wire. The rest of the request is parsed by protobuf as before.
//
// Field numbers (grpc_predict_v2.proto): ModelInferRequest.inputs = 5,
// InferInputTensor.contents = 5, InferTensorContents.bytes_contents = 8. Protobuf merges
// repeated occurrences of `contents`, so an input's elements are those of all of them, in order.
// A field whose wire type does not match its declaration is an unknown field to protobuf and is
// left alone here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ovmsx {

struct BytesContents {
  std::size_t input;        // index in ModelInferRequest.inputs
  std::size_t count;        // elements
  std::size_t packed_size;  // bytes they take in the KServe BYTES layout
};

// Pass one: every input carrying bytes_contents, in input order (none: the fast common case).
// A malformed message raises StatusError(INVALID_INPUT_FORMAT) naming the byte offset.
std::vector<BytesContents> scan_bytes_contents(const std::uint8_t* data, std::size_t size);

// Pass two, over the same message: writes the elements of the k-th input that scan found to
// outputs[k] (packed_size bytes each) and returns the message without any bytes_contents.
std::string cut_bytes_contents(const std::uint8_t* data, std::size_t size,
                               const std::vector<std::uint8_t*>& outputs);

}  // namespace ovmsx
