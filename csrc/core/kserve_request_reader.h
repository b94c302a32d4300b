// Reading a serialized ModelInferRequest of the plain kind straight from its bytes, for the
// paths that answer quick servables without Python protobuf objects (kserve_direct_infer.h,
// the Python-graph reader in bindings/kserve_direct_binding.cpp).
//
// "Plain": every field a client library sends for raw tensors and nothing else. A request
// with parameters, typed contents or requested-output parameters is declined (nullopt), as is
// a malformed one or one with a field of the wrong wire type: the general path (Python
// protobuf) then reads it and words any error, so no error a client sees is written here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/kserve_wire.h"
#include "core/tensor.h"

namespace ovmsx {

// The model name and version a ModelInferRequest names (the last occurrence of each, as
// protobuf reads it), as byte ranges into the message; nullopt when the message is malformed
// or has a field of the wrong wire type there (the general path then reports it).
struct InferTarget {
  std::size_t name_offset = 0;
  std::size_t name_size = 0;
  std::size_t version_offset = 0;
  std::size_t version_size = 0;
};
std::optional<InferTarget> read_infer_target(const std::uint8_t* data, std::size_t size);

struct RequestedInput {
  std::string_view name;
  std::string_view datatype;
  Shape shape;
};

// Views into the message, which must outlive it.
struct PlainRequest {
  std::string_view model_name;
  std::string_view model_version;
  std::string_view id;
  std::vector<RequestedInput> inputs;
  std::vector<std::string_view> outputs;  // requested outputs, by name
  std::vector<ByteRange> raw;             // raw_input_contents, in order
};
std::optional<PlainRequest> read_plain_request(const std::uint8_t* data, std::size_t size);

}  // namespace ovmsx
