// glibc malloc settings for a server that moves the same large buffers every request.
//
// By default glibc serves allocations above 128 KiB with mmap and gives freed heap tops back to
// the kernel; with one request's tensors and messages allocated and freed over and over, that
// makes every request fault its buffers in page by page again. Raising both thresholds keeps
// freed memory for the next request. No-op where the C library is not glibc.
#pragma once

#include <cstddef>

namespace ovmsx {

// Returns false when the C library does not take the settings.
bool tune_allocator(std::size_t mmap_threshold, std::size_t trim_threshold);

// Gives the free memory every arena keeps back to the kernel (malloc_trim); true if some was.
bool release_free_memory();

}  // namespace ovmsx
