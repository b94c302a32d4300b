#include "buffer_pool.h"

#include <cstdlib>
#include <functional>
#include <new>

namespace ovmsx::custom_nodes {
namespace {

// Each buffer starts on its own cache line: any output (float, uint64_t dims, the ABI structs)
// is aligned, and two threads filling neighbouring buffers never share a line.
constexpr std::size_t kAlignment = 64;

std::size_t round_up(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

BufferQueue::BufferQueue(std::size_t buffer_bytes, std::size_t count)
    : buffer_bytes_(buffer_bytes),
      stride_(round_up(buffer_bytes == 0 ? 1 : buffer_bytes)),
      count_(count),
      memory_(
          static_cast<std::byte*>(::operator new(stride_* count_, std::align_val_t{kAlignment}))),
      taken_(count, false) {
  free_slots_.reserve(count_);
  for (std::size_t slot = count_; slot-- > 0;) {
    free_slots_.push_back(slot);  // slot 0 on top: buffers are handed out in address order
  }
}

BufferQueue::~BufferQueue() { ::operator delete(memory_, std::align_val_t{kAlignment}); }

void* BufferQueue::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_slots_.empty()) {
    return nullptr;
  }
  const std::size_t slot = free_slots_.back();
  free_slots_.pop_back();
  taken_[slot] = true;
  return memory_ + slot * stride_;
}

bool BufferQueue::owns(const void* ptr) const noexcept {
  // std::less gives a total order even for pointers into different allocations.
  const auto* address = static_cast<const std::byte*>(ptr);
  return !std::less<const std::byte*>()(address, memory_) &&
         std::less<const std::byte*>()(address, memory_ + stride_ * count_);
}

bool BufferQueue::give_back(void* ptr) {
  const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(ptr) - memory_);
  if (offset % stride_ != 0) {
    return false;
  }
  const std::size_t slot = offset / stride_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!taken_[slot]) {
    return false;
  }
  taken_[slot] = false;
  free_slots_.push_back(slot);
  return true;
}

std::size_t BufferQueue::outstanding() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return count_ - free_slots_.size();
}

std::size_t BufferPool::add_queue(std::size_t buffer_bytes, std::size_t count) {
  queues_.push_back(std::make_unique<BufferQueue>(buffer_bytes, count));
  return queues_.size() - 1;
}

void* BufferPool::take(std::size_t queue, std::size_t bytes) {
  BufferQueue& buffers = *queues_.at(queue);
  if (bytes <= buffers.buffer_bytes()) {
    if (void* buffer = buffers.take()) {
      return buffer;
    }
  }
  return std::malloc(bytes == 0 ? 1 : bytes);
}

BufferPool::GiveBack BufferPool::give_back(void* ptr) {
  if (ptr == nullptr) {
    return GiveBack::kFreed;
  }
  for (const auto& buffers : queues_) {
    if (buffers->owns(ptr)) {
      return buffers->give_back(ptr) ? GiveBack::kReturned : GiveBack::kInvalid;
    }
  }
  std::free(ptr);
  return GiveBack::kFreed;
}

std::size_t BufferPool::outstanding() const {
  std::size_t total = 0;
  for (const auto& buffers : queues_) {
    total += buffers->outstanding();
  }
  return total;
}

}  // namespace ovmsx::custom_nodes
