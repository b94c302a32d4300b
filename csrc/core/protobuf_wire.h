// Reading and writing the protobuf wire format ("Encoding" in the protobuf documentation):
// a field is a varint tag (field_number << 3 | wire_type) and then its value; varints are
// little-endian groups of 7 bits. Shared by the KServe wire helpers, which read client
// requests: a malformed message is the client's error, raised as
// StatusError(INVALID_INPUT_FORMAT) naming the byte offset. Nothing is read outside the
// message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace ovmsx::wire {

constexpr std::uint32_t kVarint = 0;
constexpr std::uint32_t kFixed64 = 1;
constexpr std::uint32_t kLengthDelimited = 2;
constexpr std::uint32_t kFixed32 = 5;

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool done() const { return pos_ == size_; }
  std::size_t pos() const { return pos_; }

  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos_ == size_) {
        malformed("truncated varint");
      }
      std::uint8_t byte = data_[pos_++];
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) {
        return value;
      }
    }
    malformed("varint longer than 10 bytes");
  }

  void skip(std::uint64_t n) {
    if (n > size_ - pos_) {
      malformed("field runs past the end of the message");
    }
    pos_ += static_cast<std::size_t>(n);
  }

  // Skips the value of a field of `wire_type` (a length-delimited one, length and payload).
  void skip_value(std::uint32_t wire_type) {
    switch (wire_type) {
      case kVarint:
        varint();
        break;
      case kFixed64:
        skip(8);
        break;
      case kFixed32:
        skip(4);
        break;
      case kLengthDelimited:
        skip(varint());
        break;
      default:
        malformed("unsupported wire type");
    }
  }

  [[noreturn]] void malformed(const char* what) const {
    throw StatusError(
        StatusCode::INVALID_INPUT_FORMAT,
        std::string("malformed message at byte ") + std::to_string(offset_ + pos_) + ": " + what);
  }

  // Offsets in errors count from the start of the whole message, also for a nested one.
  Reader nested(std::size_t offset, std::size_t size) const {
    Reader inner(data_ + offset, size);
    inner.offset_ = offset_ + offset;
    return inner;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::size_t offset_ = 0;
};

inline std::size_t varint_size(std::uint64_t value) {
  std::size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

inline std::uint8_t* write_varint(std::uint8_t* out, std::uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<std::uint8_t>(value);
  return out;
}

}  // namespace ovmsx::wire
