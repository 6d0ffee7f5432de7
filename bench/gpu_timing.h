// What the benchmarks share to time GPU work: the median, and a timestamp query pool that grows
// to the number of timestamps a submission records.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <volk.h>

namespace vren::radix::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

class Timestamps {
 public:
  Timestamps(VkDevice device, double period_ns) : device_(device), period_ns_(period_ns) {}
  Timestamps(const Timestamps&) = delete;
  Timestamps& operator=(const Timestamps&) = delete;
  ~Timestamps() {
    if (pool_) vkDestroyQueryPool(device_, pool_, nullptr);
  }

  // A pool of at least `count` timestamps.
  bool reserve(uint32_t count, std::string* error) {
    if (count <= capacity_) return true;
    if (pool_) vkDestroyQueryPool(device_, pool_, nullptr);
    pool_ = VK_NULL_HANDLE;
    capacity_ = 0;
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = count;
    const VkResult made = vkCreateQueryPool(device_, &info, nullptr, &pool_);
    if (made != VK_SUCCESS) {
      pool_ = VK_NULL_HANDLE;
      if (error)
        *error = "Creating a pool of " + std::to_string(count) + " timestamp queries failed (VkResult " +
                 std::to_string(static_cast<int>(made)) + "): the device may be out of memory.";
      return false;
    }
    capacity_ = count;
    return true;
  }

  VkQueryPool pool() const { return pool_; }

  // The first `count` timestamps, waiting for them, in ticks.
  bool read(uint32_t count, std::vector<uint64_t>* ticks, std::string* error) const {
    ticks->resize(count);
    const VkResult got = vkGetQueryPoolResults(device_, pool_, 0, count, count * 8, ticks->data(), 8,
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (got == VK_SUCCESS) return true;
    if (error)
      *error = "Reading the timestamps failed (VkResult " + std::to_string(static_cast<int>(got)) +
               "): the device was lost or is out of memory.";
    return false;
  }

  double microseconds(uint64_t ticks) const { return static_cast<double>(ticks) * period_ns_ * 1e-3; }

 private:
  VkDevice device_;
  double period_ns_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t capacity_ = 0;
};

}  // namespace vren::radix::bench
