#include "core/bytes_codec.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "core/status.h"

namespace ovmsx {
namespace {

void write_le32(std::uint32_t value, std::uint8_t* out) {
  out[0] = static_cast<std::uint8_t>(value);
  out[1] = static_cast<std::uint8_t>(value >> 8);
  out[2] = static_cast<std::uint8_t>(value >> 16);
  out[3] = static_cast<std::uint8_t>(value >> 24);
}

std::uint32_t read_le32(const std::uint8_t* in) {
  return static_cast<std::uint32_t>(in[0]) | static_cast<std::uint32_t>(in[1]) << 8 |
         static_cast<std::uint32_t>(in[2]) << 16 | static_cast<std::uint32_t>(in[3]) << 24;
}

std::string where(std::size_t index, std::size_t offset) {
  return "BYTES element " + std::to_string(index) + " at byte offset " + std::to_string(offset);
}

// The length of element `index`, whose prefix starts at `offset`, after checking that the
// prefix and the bytes it announces lie inside the buffer.
std::size_t element_length(const std::uint8_t* data, std::size_t size, std::size_t offset,
                           std::size_t index) {
  const std::size_t left = size - offset;
  if (left < kBytesPrefix) {
    throw StatusError(StatusCode::INVALID_INPUT_FORMAT,
                      where(index, offset) + ": length prefix truncated, " + std::to_string(left) +
                          " of 4 bytes present");
  }
  const std::size_t length = read_le32(data + offset);
  if (length > left - kBytesPrefix) {
    throw StatusError(StatusCode::INVALID_INPUT_FORMAT,
                      where(index, offset) + ": declares " + std::to_string(length) +
                          " bytes but only " + std::to_string(left - kBytesPrefix) + " follow");
  }
  return length;
}

}  // namespace

std::size_t packed_size(const std::vector<ByteView>& items) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].size > std::numeric_limits<std::uint32_t>::max()) {
      throw StatusError(StatusCode::INVALID_INPUT_FORMAT,
                        "BYTES element " + std::to_string(i) + " holds " +
                            std::to_string(items[i].size) +
                            " bytes, more than a 4-byte length prefix can describe");
    }
    total += kBytesPrefix + items[i].size;  // cannot overflow: each term is below 2^33
  }
  return total;
}

std::uint8_t* pack_element(const std::uint8_t* data, std::size_t size, std::uint8_t* out) {
  write_le32(static_cast<std::uint32_t>(size), out);
  out += kBytesPrefix;
  if (size != 0) {  // memcpy from a null pointer is undefined even for zero bytes
    std::memcpy(out, data, size);
  }
  return out + size;
}

void pack(const std::vector<ByteView>& items, std::uint8_t* out) {
  for (const ByteView& item : items) {
    out = pack_element(item.data, item.size, out);
  }
}

std::size_t count_elements(const std::uint8_t* data, std::size_t size) {
  std::size_t count = 0;
  std::size_t offset = 0;
  while (offset < size) {
    offset += kBytesPrefix + element_length(data, size, offset, count);
    ++count;
  }
  return count;
}

std::vector<ByteView> unpack(const std::uint8_t* data, std::size_t size,
                             std::optional<std::size_t> expected_count) {
  // Counted first, so that a count the shape does not allow is refused before anything is
  // stored, and the views take exactly the memory they need.
  const std::size_t count = count_elements(data, size);
  if (expected_count && count != *expected_count) {
    throw StatusError(StatusCode::INVALID_VALUE_COUNT, "BYTES buffer of " + std::to_string(size) +
                                                           " bytes holds " + std::to_string(count) +
                                                           " elements; the shape needs " +
                                                           std::to_string(*expected_count));
  }
  std::vector<ByteView> items;
  items.reserve(count);
  std::size_t offset = 0;
  while (offset < size) {
    const std::size_t length = read_le32(data + offset);  // checked by count_elements
    items.push_back({data + offset + kBytesPrefix, length});
    offset += kBytesPrefix + length;
  }
  return items;
}

std::size_t padded_width(const std::vector<ByteView>& items) {
  std::size_t longest = 0;
  for (const ByteView& item : items) {
    longest = std::max(longest, item.size);
  }
  return longest + 1;
}

void pack_padded(const std::vector<ByteView>& items, std::size_t width, std::uint8_t* out) {
  for (const ByteView& item : items) {
    if (item.size != 0) {
      std::memcpy(out, item.data, item.size);
    }
    std::memset(out + item.size, 0, width - item.size);
    out += width;
  }
}

std::vector<ByteView> unpack_padded(const std::uint8_t* data, std::size_t rows, std::size_t width) {
  std::vector<ByteView> items;
  items.reserve(rows);
  for (std::size_t row = 0; row < rows; ++row) {
    const std::uint8_t* begin = data + row * width;
    const void* zero = width ? std::memchr(begin, 0, width) : nullptr;
    const std::size_t length =
        zero ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(zero) - begin) : width;
    items.push_back({begin, length});
  }
  return items;
}

}  // namespace ovmsx
