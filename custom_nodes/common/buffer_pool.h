// A preallocated pool of output buffers for a custom node (the memory-pool pattern of OVMS's
// custom node guide: allocate in initialize, reuse across requests, free in deinitialize).
//
// The pool holds queues of equal-size buffers, one queue per kind of buffer a node hands out
// (output arrays, output data, dims, metadata). take() returns a free buffer of a queue, or
// malloc()s one when the queue is empty or the request does not fit; give_back() returns a
// pool buffer to its queue and free()s anything else. Both may be called from any thread at any
// time, as the ABI requires of release() (COMPAT.md §1.3). Queues are added only before
// the pool is shared, so lookups need no lock; each queue guards its own free list.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace ovmsx::custom_nodes {

class BufferQueue {
 public:
  BufferQueue(std::size_t buffer_bytes, std::size_t count);
  ~BufferQueue();
  BufferQueue(const BufferQueue&) = delete;
  BufferQueue& operator=(const BufferQueue&) = delete;

  std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  // A free buffer, or nullptr when all are taken.
  void* take();
  // Whether `ptr` lies anywhere inside this queue's memory (no lock: the range never changes).
  bool owns(const void* ptr) const noexcept;
  // Returns a buffer taken from this queue. False when `ptr` is owned but is not the start of
  // a buffer that is currently taken (a double release, or a pointer into the middle).
  bool give_back(void* ptr);
  std::size_t outstanding() const;

 private:
  std::size_t buffer_bytes_;
  std::size_t stride_;
  std::size_t count_;
  std::byte* memory_;
  mutable std::mutex mutex_;
  std::vector<std::size_t> free_slots_;  // a stack: the most recently returned buffer is reused
  std::vector<bool> taken_;
};

class BufferPool {
 public:
  enum class GiveBack { kReturned, kFreed, kInvalid };

  // Adds a queue of `count` buffers of `buffer_bytes` each and returns its id. Not thread-safe:
  // call while setting the pool up, before any take() or give_back().
  std::size_t add_queue(std::size_t buffer_bytes, std::size_t count);

  // A buffer of at least `bytes`: from queue `queue` when one is free and large enough, else
  // from malloc(). nullptr only when malloc fails.
  void* take(std::size_t queue, std::size_t bytes);
  // Returns a pool buffer to its queue, or free()s memory that take() got from malloc().
  GiveBack give_back(void* ptr);
  // Pool buffers currently taken (malloc()ed fallbacks are not counted).
  std::size_t outstanding() const;

 private:
  std::vector<std::unique_ptr<BufferQueue>> queues_;
};

}  // namespace ovmsx::custom_nodes
