// KServe v2 BYTES tensors and the custom-node string form.
//
// KServe layout (KServe v2 protocol, "Tensor Data"; COMPAT.md §2.5): the elements follow one
// another, each as a 4-byte little-endian unsigned length and then that many bytes.
//
// Custom-node string form (COMPAT.md §1, last paragraph): a 2-D UINT8 tensor [N, width] where
// row i holds element i followed by zero padding; width is the longest element plus one, so
// every row ends in at least one zero byte.
//
// Decoders never read outside [data, data + size): malformed input raises StatusError naming
// the element and byte offset where it went wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ovmsx {

struct ByteView {
  const std::uint8_t* data;
  std::size_t size;
};

// Bytes of the length prefix in front of every KServe BYTES element.
constexpr std::size_t kBytesPrefix = 4;

// Writes one element (its prefix, then its `size` bytes) at `out`; returns the end of it.
// Requires size < 2^32.
std::uint8_t* pack_element(const std::uint8_t* data, std::size_t size, std::uint8_t* out);

// Bytes needed to pack `items`; an element longer than 2^32 - 1 bytes cannot be described by
// its prefix and raises StatusError(INVALID_INPUT_FORMAT).
std::size_t packed_size(const std::vector<ByteView>& items);

// Writes the KServe layout of `items` to `out`, which holds packed_size(items) bytes.
void pack(const std::vector<ByteView>& items, std::uint8_t* out);

// How many elements a KServe BYTES buffer holds, checking its layout without storing anything.
std::size_t count_elements(const std::uint8_t* data, std::size_t size);

// The elements of a KServe BYTES buffer, as views into it. If `expected_count` is given, a
// buffer holding another number of elements raises StatusError(INVALID_VALUE_COUNT) before
// any view is stored: a request announcing few elements and sending millions costs nothing.
std::vector<ByteView> unpack(const std::uint8_t* data, std::size_t size,
                             std::optional<std::size_t> expected_count = std::nullopt);

// Row width of the padded form: longest element + 1.
std::size_t padded_width(const std::vector<ByteView>& items);

// Writes items.size() rows of `width` bytes to `out`, padding each with zeros.
// Requires width > every element's size.
void pack_padded(const std::vector<ByteView>& items, std::size_t width, std::uint8_t* out);

// Each row of a [rows, width] padded buffer, up to its first zero byte (the whole row if none).
std::vector<ByteView> unpack_padded(const std::uint8_t* data, std::size_t rows, std::size_t width);

}  // namespace ovmsx
