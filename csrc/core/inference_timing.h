// How long a pool's inferences take, measured around the inference itself (no hand-offs), so
// callers can tell a model that runs in microseconds from one that runs in milliseconds.
//
// Lock-free and approximate on purpose: two inferences finishing at once may each update the
// average from the same old value and one sample is lost, which a moving average shrugs off.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace ovmsx {

class InferenceTiming {
 public:
  using Clock = std::chrono::steady_clock;

  // The first inferences pay for cold caches and first-time allocations, so until this many
  // have run the average is the fastest of them.
  static constexpr std::uint64_t kWarmUp = 8;

  void record(Clock::duration elapsed) noexcept {
    double seconds = std::chrono::duration<double>(elapsed).count();
    const std::uint64_t count = count_.fetch_add(1, std::memory_order_relaxed) + 1;
    const double average = average_.load(std::memory_order_relaxed);
    // One sample counts for at most kOutlier times the average: a thread descheduled in the
    // middle of a microsecond inference must not make the model look slow, while a model
    // that really became slower still doubles its average within a few inferences.
    seconds = std::min(seconds, kOutlier * average);
    const double next =
        count <= kWarmUp ? std::min(average, seconds) : average + kWeight * (seconds - average);
    average_.store(next, std::memory_order_relaxed);
  }

  // Seconds; infinity before the first inference.
  double average() const noexcept { return average_.load(std::memory_order_relaxed); }
  std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  static constexpr double kWeight = 0.1;  // of the newest inference
  static constexpr double kOutlier = 4.0;
  std::atomic<double> average_{std::numeric_limits<double>::infinity()};
  std::atomic<std::uint64_t> count_{0};
};

}  // namespace ovmsx
