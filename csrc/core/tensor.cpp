#include "core/tensor.h"

#include <utility>

#include "core/datatype.h"
#include "core/status.h"

namespace ovmsx {
namespace {

std::size_t checked_mul(std::size_t a, std::size_t b, const char* what) {
  std::size_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw StatusError(StatusCode::INVALID_SHAPE,
                      std::string(what) + " overflows the address space");
  }
  return product;
}

}  // namespace

std::string shape_to_string(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? "," : "") + std::to_string(shape[i]);
  }
  return text + ")";
}

std::size_t element_count(const Shape& shape) {
  std::size_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) {
      throw StatusError(StatusCode::INVALID_SHAPE,
                        "Negative dimension size is not acceptable: " + shape_to_string(shape));
    }
    std::size_t next = 0;
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(dim), &next)) {
      throw StatusError(StatusCode::INVALID_SHAPE,
                        "element count of shape " + shape_to_string(shape) + " overflows");
    }
    count = next;
  }
  return count;
}

BufferLayout BufferLayout::contiguous(std::string format, std::size_t itemsize,
                                      std::vector<std::size_t> shape) {
  BufferLayout layout{std::move(format), itemsize, std::move(shape), {}};
  layout.strides.resize(layout.shape.size());
  std::size_t stride = itemsize;
  for (std::size_t i = layout.shape.size(); i-- > 0;) {
    layout.strides[i] = stride;
    stride = checked_mul(stride, layout.shape[i], "buffer byte size");
  }
  return layout;
}

BufferLayout BufferLayout::raw_bytes(std::size_t nbytes) { return contiguous("B", 1, {nbytes}); }

std::size_t BufferLayout::nbytes() const {
  std::size_t total = itemsize;
  for (const std::size_t dim : shape) {
    total = checked_mul(total, dim, "buffer byte size");
  }
  return total;
}

Tensor::Tensor(std::string name, std::string datatype, Shape shape, BufferLayout layout,
               const std::uint8_t* data, MemoryOwner owner)
    : name_(std::move(name)),
      datatype_(std::move(datatype)),
      shape_(std::move(shape)),
      layout_(std::move(layout)),
      data_(data),
      size_(layout_.nbytes()),
      owner_(std::move(owner)) {}

std::shared_ptr<Tensor> Tensor::view(std::string name, std::string datatype, Shape shape,
                                     const std::uint8_t* data, std::size_t nbytes,
                                     MemoryOwner owner) {
  const std::size_t count = element_count(shape);
  BufferLayout layout;
  if (const auto element = format_of_datatype(datatype)) {
    const std::size_t expected = checked_mul(count, element->itemsize, "tensor byte size");
    if (nbytes != expected) {
      throw StatusError(StatusCode::INVALID_CONTENT_SIZE,
                        "Expected: " + std::to_string(expected) + " bytes; Actual: " +
                            std::to_string(nbytes) + " bytes; input name: " + name);
    }
    layout = BufferLayout::contiguous(std::string(element->format), element->itemsize,
                                      std::vector<std::size_t>(shape.begin(), shape.end()));
  } else {
    layout = BufferLayout::raw_bytes(nbytes);
  }
  return std::make_shared<Tensor>(std::move(name), std::move(datatype), std::move(shape),
                                  std::move(layout), data, std::move(owner));
}

std::shared_ptr<std::uint8_t[]> allocate_bytes(std::size_t nbytes, bool zeroed) {
  // new[] of zero bytes still yields a unique, valid pointer, so empty tensors need no case.
  return std::shared_ptr<std::uint8_t[]>(zeroed ? new std::uint8_t[nbytes]()
                                                : new std::uint8_t[nbytes]);
}

}  // namespace ovmsx
