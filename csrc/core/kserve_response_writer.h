// Writing the fields of a serialized ModelInferResponse straight from C++ values, for the
// paths that answer without Python protobuf objects. Fields are written in field-number order,
// as protobuf serializes them, and a string field left empty is left out, as proto3 does, so
// the bytes equal those protobuf would write for the same message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ovmsx {

namespace response_field {  // ModelInferResponse
constexpr std::uint32_t kModelName = 1;
constexpr std::uint32_t kModelVersion = 2;
constexpr std::uint32_t kId = 3;
constexpr std::uint32_t kParameters = 4;
constexpr std::uint32_t kOutputs = 5;
constexpr std::uint32_t kRawOutputContents = 6;
}  // namespace response_field

// Appends one length-delimited field (tag, length, payload) to `out`.
void append_length_delimited(std::string& out, std::uint32_t number, std::string_view payload);

// An InferOutputTensor message: name, datatype and (unless empty) the packed shape.
std::string output_tensor_message(std::string_view name, std::string_view datatype,
                                  const Shape& shape);

// Writes the tag and length of a length-delimited field of `size` bytes; returns where its
// payload goes.
std::uint8_t* write_field_header(std::uint8_t* out, std::uint32_t number, std::size_t size);

// A response that holds tensors: its fields 1-5 (`head`), then each tensor's bytes as
// raw_output_contents. `parameter`, if set, is one int64 response parameter.
class TensorResponse {
 public:
  TensorResponse(std::string_view model_name, std::string_view model_version, std::string_view id,
                 std::optional<std::pair<std::string_view, std::int64_t>> parameter,
                 std::vector<std::pair<std::string_view, std::shared_ptr<Tensor>>> outputs);

  std::size_t size() const noexcept { return size_; }
  // Writes the whole serialized response (size() bytes) at `out`.
  void write(std::uint8_t* out) const;

 private:
  std::string head_;
  std::vector<std::shared_ptr<Tensor>> tensors_;
  std::size_t size_ = 0;
};

}  // namespace ovmsx
