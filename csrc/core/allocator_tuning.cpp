#include "core/allocator_tuning.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ovmsx {

bool tune_allocator(std::size_t mmap_threshold, std::size_t trim_threshold) {
#if defined(__GLIBC__)
  if (mmap_threshold > INT_MAX || trim_threshold > INT_MAX) {
    return false;
  }
  // mallopt returns 1 on success (glibc manual, "Malloc Tunable Parameters").
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_threshold)) == 1 &&
         mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim_threshold)) == 1;
#else
  (void)mmap_threshold;
  (void)trim_threshold;
  return false;
#endif
}

bool release_free_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) == 1;
#else
  return false;
#endif
}

}  // namespace ovmsx
