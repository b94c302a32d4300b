// The one Tensor type of ovmsx, exported to user scripts as pyovms.Tensor.
//
// A Tensor is an immutable view: a name, a KServe datatype and a user-visible shape over bytes
// that something else keeps alive (a Python object, a request buffer, an ov::Tensor, a custom
// node's output with its release function). The owner is type-erased into a shared_ptr, so the
// memory stays valid exactly as long as some Tensor (or other holder) still views it.
//
// The user-visible shape and datatype may disagree with the buffer layout on purpose
// (COMPAT.md §2.3): BYTES and custom datatypes are laid out as one flat run of bytes, and the
// Python constructor's shape/datatype overrides never touch the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ovmsx {

using Shape = std::vector<std::int64_t>;

// Anything whose lifetime keeps a Tensor's memory valid.
using MemoryOwner = std::shared_ptr<const void>;

// The memory as the Python buffer protocol (PEP 3118) describes it: always C-contiguous.
struct BufferLayout {
  std::string format;  // struct-module format of one element
  std::size_t itemsize = 1;
  std::vector<std::size_t> shape;
  std::vector<std::size_t> strides;  // bytes; derived from shape and itemsize

  // C-contiguous strides: the last is the itemsize, each earlier one spans the dims after it.
  // Throws StatusError(INVALID_SHAPE) if the byte size does not fit in size_t.
  static BufferLayout contiguous(std::string format, std::size_t itemsize,
                                 std::vector<std::size_t> shape);
  // One flat run of bytes: format "B", shape (nbytes,), strides (1,).
  static BufferLayout raw_bytes(std::size_t nbytes);

  std::size_t nbytes() const;
};

class Tensor {
 public:
  // `data` must hold layout.nbytes() bytes for as long as `owner` lives.
  Tensor(std::string name, std::string datatype, Shape shape, BufferLayout layout,
         const std::uint8_t* data, MemoryOwner owner);

  // A view of `nbytes` bytes laid out as pyovms lays out request data: datatypes of the table
  // get their format and C-contiguous strides over `shape`, and then `nbytes` must equal
  // product(shape) * itemsize (StatusError INVALID_CONTENT_SIZE otherwise); BYTES and custom
  // datatypes get a raw-bytes layout. Negative or overflowing dims raise INVALID_SHAPE.
  static std::shared_ptr<Tensor> view(std::string name, std::string datatype, Shape shape,
                                      const std::uint8_t* data, std::size_t nbytes,
                                      MemoryOwner owner);

  const std::string& name() const noexcept { return name_; }
  const std::string& datatype() const noexcept { return datatype_; }
  const Shape& shape() const noexcept { return shape_; }
  const BufferLayout& layout() const noexcept { return layout_; }
  const std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::string name_;
  std::string datatype_;
  Shape shape_;
  BufferLayout layout_;
  const std::uint8_t* data_;
  std::size_t size_;
  MemoryOwner owner_;
};

// Fresh heap memory for a Tensor to own; zero-filled when asked (the padded string form needs
// its padding zeroed, a buffer about to be overwritten whole does not).
std::shared_ptr<std::uint8_t[]> allocate_bytes(std::size_t nbytes, bool zeroed);

// Checks that dims are non-negative and returns their element count; raises
// StatusError(INVALID_SHAPE) naming the dims otherwise, or when the count overflows.
std::size_t element_count(const Shape& shape);

std::string shape_to_string(const Shape& shape);

}  // namespace ovmsx
