//===- timer.cc - Timing launches with CUDA events ------------------------===//
//
// This file implements TimeIt: one pair of events per timed run, all recorded
// before a single synchronization, and an L2 flush buffer sized from the
// current device.
//
//===----------------------------------------------------------------------===//

#include "runtime/timer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/buffer.h"
#include "runtime/cuda_driver.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {
namespace {

/// A CUDA event destroyed on scope exit.
class Event {
 public:
  explicit Event(const CudaDriver& driver) : driver_(&driver) {}
  Event(Event&& other) noexcept
      : driver_(other.driver_), event_(std::exchange(other.event_, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event_ != nullptr) driver_->cuEventDestroy(event_);
  }

  absl::Status Create() {
    return ToStatus(driver_->cuEventCreate(&event_, CU_EVENT_DEFAULT),
                    "cuEventCreate");
  }
  CUevent get() const { return event_; }

 private:
  const CudaDriver* driver_;
  CUevent event_ = nullptr;
};

/// Allocates a buffer of twice the current device's L2 size.
absl::StatusOr<DeviceBuffer> AllocateFlushBuffer(const CudaDriver& driver) {
  TESSERA_ASSIGN_OR_RETURN(
      int l2_bytes, CurrentDeviceAttribute(driver, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size"));
  return DeviceBuffer::Allocate(2 * static_cast<size_t>(l2_bytes));
}

}  // namespace

absl::StatusOr<TimingResult> TimeIt(std::function<absl::Status()> launch,
                                    const TimingOptions& options) {
  if (options.iterations < 1 || options.warmup < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TimeIt needs iterations >= 1 and warmup >= 0, got ",
        options.iterations, " and ", options.warmup));
  }
  TESSERA_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Load());
  DeviceBuffer flush;
  if (options.flush_l2) {
    TESSERA_ASSIGN_OR_RETURN(flush, AllocateFlushBuffer(*driver));
  }
  // Alternates the flush value so no run can be served a cached clean line.
  uint8_t flush_value = 0;
  auto flush_l2 = [&]() -> absl::Status {
    if (flush.size() == 0) return absl::OkStatus();
    return ToStatus(driver->cuMemsetD8Async(flush.ptr(), ++flush_value,
                                            flush.size(), options.stream),
                    "cuMemsetD8Async(L2 flush)");
  };

  for (int i = 0; i < options.warmup; ++i) {
    TESSERA_RETURN_IF_ERROR(flush_l2());
    TESSERA_RETURN_IF_ERROR(launch());
  }

  std::vector<Event> starts, stops;
  starts.reserve(options.iterations);
  stops.reserve(options.iterations);
  for (int i = 0; i < options.iterations; ++i) {
    starts.emplace_back(*driver);
    stops.emplace_back(*driver);
    TESSERA_RETURN_IF_ERROR(starts.back().Create());
    TESSERA_RETURN_IF_ERROR(stops.back().Create());
  }
  for (int i = 0; i < options.iterations; ++i) {
    TESSERA_RETURN_IF_ERROR(flush_l2());
    TESSERA_CU_RETURN_IF_ERROR(*driver,
                               cuEventRecord(starts[i].get(), options.stream));
    TESSERA_RETURN_IF_ERROR(launch());
    TESSERA_CU_RETURN_IF_ERROR(*driver,
                               cuEventRecord(stops[i].get(), options.stream));
    if (options.sync_each_run) {
      TESSERA_CU_RETURN_IF_ERROR(*driver, cuEventSynchronize(stops[i].get()));
    }
  }
  TESSERA_CU_RETURN_IF_ERROR(*driver, cuEventSynchronize(stops.back().get()));

  std::vector<double> samples;
  for (int i = 0; i < options.iterations; ++i) {
    float ms = 0;
    TESSERA_CU_RETURN_IF_ERROR(
        *driver, cuEventElapsedTime(&ms, starts[i].get(), stops[i].get()));
    samples.push_back(ms);
  }
  return SummarizeTimes(std::move(samples));
}

TimingResult SummarizeTimes(std::vector<double> samples_ms) {
  TimingResult result;
  result.samples_ms = std::move(samples_ms);
  if (result.samples_ms.empty()) return result;
  std::vector<double> sorted = result.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  result.median_ms =
      n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  result.min_ms = sorted.front();
  result.max_ms = sorted.back();
  return result;
}

}  // namespace tessera::runtime
