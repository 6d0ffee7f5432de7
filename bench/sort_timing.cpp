#include "sort_timing.h"

#include <volk.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gpu_timing.h"
#include "radix_shared.h"

namespace vren::radix::bench {
namespace {

// Untimed sorts recorded before the timed ones, in the same submission. A GPU that idled while
// the host prepared data runs at a fraction of its clock until it has been busy for a while (an
// H200 at 345-960 MHz instead of 1980 MHz sorted 2-5x slower; its clock came back within about
// 200 ms of steady work). Sized from one probe sort to keep the GPU busy for kWarmupMs at the
// probe's speed, which may itself have been slowed; at most kMaxWarmupSorts (sorts below about
// 2^17 keys warm up for less).
constexpr double kWarmupMs = 500;
constexpr double kMaxWarmupSorts = 2000;

// A profiling build's (VREN_RADIX_SHADER_CLOCKS) clock words of the internal buffer's state block.
#ifdef VREN_RADIX_SHADER_CLOCKS
constexpr VkDeviceSize kClockBytes = 4 * VREN_RADIX_CLOCK_WORDS;
#else
constexpr VkDeviceSize kClockBytes = 0;
#endif

// One input on the device, sorted again and again: the sort's buffers, a pristine copy of the
// input that every sort starts from, and the timestamps. Freed with it.
class RepeatedSort {
 public:
  explicit RepeatedSort(Context& ctx) : ctx_(ctx), timestamps_(ctx.vkDevice(), ctx.device().timestamp_period_ns) {}
  RepeatedSort(const RepeatedSort&) = delete;
  RepeatedSort& operator=(const RepeatedSort&) = delete;
  ~RepeatedSort() {
    for (GpuBuffer* b : {&keys_, &keys_temp_, &values_, &values_temp_, &internal_, &pristine_keys_, &pristine_values_,
                         &gpu_count_, &staging_})
      if (b->buffer) ctx_.destroyBuffer(b);
  }

  // Checks the input as Context::sort does (Context::checkInput), creates the buffers and uploads
  // the input.
  bool upload(std::span<const uint32_t> key_words, std::span<const uint32_t> value_span, const SortOptions& o,
              std::string* error);

  // Records `warmup` untimed sorts, then `repetitions` timed ones, in one submission, each from
  // the pristine input. times[r]: the timed sort r's time, then with every_dispatch each
  // dispatch's. With read_back the last sort's output goes to staging.
  bool sort(uint32_t warmup, uint32_t repetitions, bool every_dispatch, bool read_back,
            std::vector<std::vector<double>>* times, std::string* error);

  // The output sort(read_back) left in staging, and in a profiling build its clock words.
  void output(std::span<uint32_t> key_words, std::span<uint32_t> value_span, std::vector<uint32_t>* clocks) const {
    const char* staged = static_cast<const char*>(staging_.mapped);
    if (key_bytes_) std::memcpy(key_words.data(), staged, key_bytes_);
    if (value_bytes_) std::memcpy(value_span.data(), staged + key_bytes_, value_bytes_);
    if (!clocks) return;
    clocks->assign(kClockBytes / 4, 0);
    if (kClockBytes) std::memcpy(clocks->data(), staged + key_bytes_ + value_bytes_, kClockBytes);
  }

  uint32_t count() const { return info_.count; }

 private:
  Context& ctx_;
  Timestamps timestamps_;
  GpuBuffer keys_, keys_temp_, values_, values_temp_, internal_, pristine_keys_, pristine_values_, gpu_count_, staging_;
  VkDeviceSize key_bytes_ = 0, value_bytes_ = 0;
  bool gpu_count_used_ = false;
  SortInfo info_;
};

bool RepeatedSort::upload(std::span<const uint32_t> key_words, std::span<const uint32_t> value_span,
                          const SortOptions& o, std::string* error) {
  const uint32_t words_per_key = o.key_type == KeyType::kU64 ? 2 : 1;
  uint32_t count = 0;
  if (!ctx_.checkInput(key_words.size(), value_span.size(), o, true, &count, error)) return false;
  const bool with_values = !value_span.empty();
  key_bytes_ = VkDeviceSize{count} * 4 * words_per_key;
  value_bytes_ = with_values ? VkDeviceSize{count} * 4 : 0;
  gpu_count_used_ = o.gpu_count;

  const Sorter* sorter = ctx_.sorter();
  const MemoryRequirements req = getMemoryRequirements(sorter, count, with_values, o.key_type);
  bool ok = ctx_.createBuffer(key_bytes_, req.usage, false, &keys_, error) &&
            ctx_.createBuffer(key_bytes_, req.usage, false, &keys_temp_, error) &&
            ctx_.createBuffer(key_bytes_, 0, false, &pristine_keys_, error) &&
            ctx_.createBuffer(req.internal_size, req.internal_usage, false, &internal_, error) &&
            ctx_.createBuffer(4, req.usage, false, &gpu_count_, error) &&
            ctx_.createBuffer(key_bytes_ + value_bytes_ + kClockBytes, 0, true, &staging_, error);
  if (ok && with_values)
    ok = ctx_.createBuffer(value_bytes_, req.usage, false, &values_, error) &&
         ctx_.createBuffer(value_bytes_, req.usage, false, &values_temp_, error) &&
         ctx_.createBuffer(value_bytes_, 0, false, &pristine_values_, error);
  if (!ok) return false;

  info_ = sortInfoFor(o, count);
  info_.keys = {keys_.buffer, 0, key_bytes_};
  info_.keys_temp = {keys_temp_.buffer, 0, key_bytes_};
  if (with_values) {
    info_.values = {values_.buffer, 0, value_bytes_};
    info_.values_temp = {values_temp_.buffer, 0, value_bytes_};
  }
  info_.internal = {internal_.buffer, 0, internal_.size};
  if (const char* why = validateSortInfo(sorter, info_)) {
    *error = why;
    return false;
  }

  // An empty span's data() may be null: copy only what there is.
  char* const staged = static_cast<char*>(staging_.mapped);
  if (key_bytes_) std::memcpy(staged, key_words.data(), key_bytes_);
  if (value_bytes_) std::memcpy(staged + key_bytes_, value_span.data(), value_bytes_);
  double upload_ms = 0;
  if (!ctx_.submit(
          [&](VkCommandBuffer cmd) {
            ctx_.cmdCopy(cmd, staging_.buffer, 0, pristine_keys_.buffer, 0, key_bytes_);
            ctx_.cmdCopy(cmd, staging_.buffer, key_bytes_, pristine_values_.buffer, 0, value_bytes_);
            if (o.gpu_count) vkCmdUpdateBuffer(cmd, gpu_count_.buffer, 0, 4, &o.gpu_count_value);
            // Sorts that run no setup pass (one workgroup's) leave the clock words as they are.
            if (kClockBytes) vkCmdFillBuffer(cmd, internal_.buffer, 4 * VREN_RADIX_STATE_CLOCKS, kClockBytes, 0);
          },
          error, &upload_ms))
    return false;
  if (upload_ms < 0) {
    *error = "Device '" + ctx_.device().name + "' has no timestamp queries on its compute queue.";
    return false;
  }
  return true;
}

bool RepeatedSort::sort(uint32_t warmup, uint32_t repetitions, bool every_dispatch, bool read_back,
                        std::vector<std::vector<double>>* times, std::string* error) {
  const uint32_t per_sort = every_dispatch ? 2 + 3 * getPassCount(ctx_.sorter(), info_) : 2;
  const uint32_t queries = per_sort * repetitions;
  if (!timestamps_.reserve(queries, error)) return false;
  const bool submitted = ctx_.submit(
      [&](VkCommandBuffer cmd) {
        vkCmdResetQueryPool(cmd, timestamps_.pool(), 0, queries);
        SortResult result{};
        for (uint32_t r = 0; r < warmup + repetitions; ++r) {
          // Restore the input; the previous sort (or upload) must be done with the buffers first.
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
          ctx_.cmdCopy(cmd, pristine_keys_.buffer, 0, keys_.buffer, 0, key_bytes_);
          ctx_.cmdCopy(cmd, pristine_values_.buffer, 0, values_.buffer, 0, value_bytes_);
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
          SortInfo si = info_;
          si.timestamp_every_dispatch = every_dispatch;
          si.timestamp_pool = r < warmup ? VK_NULL_HANDLE : timestamps_.pool();
          si.first_query = r < warmup ? 0 : per_sort * (r - warmup);
          result = gpu_count_used_ ? cmdSortIndirect(ctx_.sorter(), cmd, si, {gpu_count_.buffer, 0, 4})
                                   : cmdSort(ctx_.sorter(), cmd, si);
        }
        if (!read_back) return;
        ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        ctx_.cmdCopy(cmd, result.keys.buffer, 0, staging_.buffer, 0, key_bytes_);
        ctx_.cmdCopy(cmd, result.values.buffer, 0, staging_.buffer, key_bytes_, value_bytes_);
        if (kClockBytes)
          ctx_.cmdCopy(cmd, internal_.buffer, 4 * VREN_RADIX_STATE_CLOCKS, staging_.buffer, key_bytes_ + value_bytes_,
                       kClockBytes);
        ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
      },
      error);
  std::vector<uint64_t> ticks;
  if (!submitted || !timestamps_.read(queries, &ticks, error)) return false;
  auto ms = [&](uint64_t begin, uint64_t end) { return timestamps_.microseconds(end - begin) * 1e-3; };
  times->clear();
  for (uint32_t r = 0; r < repetitions; ++r) {
    const uint64_t* t = &ticks[per_sort * r];
    std::vector<double> row = {ms(t[0], t[per_sort - 1])};
    for (uint32_t i = 1; every_dispatch && i + 1 < per_sort; ++i) row.push_back(ms(t[i - 1], t[i]));
    times->push_back(row);
  }
  return true;
}

bool timeRepeatedSorts(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
                       int repetitions, bool every_dispatch, std::vector<std::vector<double>>* times,
                       std::vector<uint32_t>* clocks, std::string* error) {
  RepeatedSort sorts(ctx);
  if (!sorts.upload(keys, values, options, error)) return false;
  uint32_t warmup = 0;
  if (sorts.count() > 0) {  // nothing to sort, nothing to warm up
    std::vector<std::vector<double>> probe;
    if (!sorts.sort(0, 1, false, false, &probe, error)) return false;
    const double probe_ms = std::max(probe.front().front(), 1e-4);
    warmup = static_cast<uint32_t>(std::clamp(std::ceil(kWarmupMs / probe_ms), 1.0, kMaxWarmupSorts));
  }
  if (!sorts.sort(warmup, static_cast<uint32_t>(std::max(1, repetitions)), every_dispatch, true, times, error))
    return false;
  sorts.output(keys, values, clocks);
  return true;
}

}  // namespace

bool timeSorts(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
               int repetitions, std::vector<double>* gpu_ms, std::string* error) {
  std::vector<std::vector<double>> times;
  if (!timeRepeatedSorts(ctx, keys, values, options, repetitions, false, &times, nullptr, error)) return false;
  gpu_ms->clear();
  for (const auto& row : times) gpu_ms->push_back(row.front());
  return true;
}

bool profileSorts(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
                  int repetitions, std::vector<std::vector<double>>* step_ms, std::string* error,
                  std::vector<uint32_t>* clocks) {
  return timeRepeatedSorts(ctx, keys, values, options, repetitions, true, step_ms, clocks, error);
}

}  // namespace vren::radix::bench
