#include "checked_sorts.h"

#include <volk.h>

#include <algorithm>
#include <cstring>
#include <functional>

namespace vren::radix::test {
namespace {

constexpr VkDeviceSize kCanaryBytes = kCanaryWords * 4;

bool allAre(const uint32_t* words, size_t count, uint32_t word) {
  return std::all_of(words, words + count, [word](uint32_t w) { return w == word; });
}

// The bytes a range of the sort covers: 0 for one it does not use.
VkDeviceSize usedBytes(const BufferRange& r) {
  return r.buffer ? r.size : 0;
}

uint32_t wordsPerKey(const SortOptions& o) {
  return o.key_type == KeyType::kU64 ? 2 : 1;
}

// The device-local buffers of one checked run, each followed by canaries, and a host-visible
// staging buffer that carries the uploads there and the results and canaries back. Freed with it.
class Guarded {
 public:
  explicit Guarded(Context& ctx) : ctx_(ctx) {}
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  ~Guarded() {
    for (Entry& e : buffers_) ctx_.destroyBuffer(&e.gpu);
    if (staging_.buffer) ctx_.destroyBuffer(&staging_);
  }

  // A buffer whose first `used` bytes are uploaded from `data`, or hold kPoison where data is
  // null. A failure leaves the reason in error() and makes the next steps no-ops.
  BufferRange add(VkDeviceSize used, VkBufferUsageFlags usage, const void* data) {
    Entry e{{}, used, data};
    if (!error_.empty() || !ctx_.createBuffer(used + kCanaryBytes, usage, false, &e.gpu, &error_)) return {};
    buffers_.push_back(e);
    return {e.gpu.buffer, 0, used};
  }

  // In one submission: the poison, the canaries and the uploads, then `record`, which returns
  // the buffers whose first result_bytes[i] bytes are the results; those are read back
  // (result(i)), then every buffer's canaries.
  bool run(const std::function<std::vector<VkBuffer>(VkCommandBuffer)>& record,
           const std::vector<VkDeviceSize>& result_bytes) {
    VkDeviceSize staged_bytes = 0;
    for (const Entry& e : buffers_) staged_bytes += e.data ? e.used : 0;
    for (VkDeviceSize bytes : result_bytes) staged_bytes += bytes;
    if (!error_.empty() ||
        !ctx_.createBuffer(staged_bytes + buffers_.size() * kCanaryBytes, 0, true, &staging_, &error_))
      return false;
    char* const staged = static_cast<char*>(staging_.mapped);
    VkDeviceSize at = 0;
    for (Entry& e : buffers_) {
      if (!e.data || !e.used) continue;
      std::memcpy(staged + at, e.data, e.used);
      e.staged_at = at;
      at += e.used;
    }
    return ctx_.submit(
        [&](VkCommandBuffer cmd) {
          for (const Entry& e : buffers_)
            if (!e.data) vkCmdFillBuffer(cmd, e.gpu.buffer, 0, VK_WHOLE_SIZE, kPoison);
          // The canaries overwrite the poison's tail.
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
          for (const Entry& e : buffers_) {
            vkCmdFillBuffer(cmd, e.gpu.buffer, e.used, kCanaryBytes, kCanary);
            if (e.data) ctx_.cmdCopy(cmd, staging_.buffer, e.staged_at, e.gpu.buffer, 0, e.used);
          }
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
          const std::vector<VkBuffer> results = record(cmd);
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
          results_at_.clear();
          for (size_t i = 0; i < results.size(); ++i) {
            results_at_.push_back(at);
            ctx_.cmdCopy(cmd, results[i], 0, staging_.buffer, at, result_bytes[i]);
            at += result_bytes[i];
          }
          canaries_at_ = at;
          for (const Entry& e : buffers_) {
            ctx_.cmdCopy(cmd, e.gpu.buffer, e.used, staging_.buffer, at, kCanaryBytes);
            at += kCanaryBytes;
          }
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        },
        &error_);
  }

  const uint32_t* result(size_t i) const {
    return reinterpret_cast<const uint32_t*>(static_cast<const char*>(staging_.mapped) + results_at_[i]);
  }
  bool canariesIntact() const {
    const auto* words = reinterpret_cast<const uint32_t*>(static_cast<const char*>(staging_.mapped) + canaries_at_);
    return allAre(words, buffers_.size() * kCanaryWords, kCanary);
  }
  const std::string& error() const { return error_; }

 private:
  struct Entry {
    GpuBuffer gpu;
    VkDeviceSize used = 0;
    const void* data = nullptr;
    VkDeviceSize staged_at = 0;
  };

  Context& ctx_;
  std::vector<Entry> buffers_;
  GpuBuffer staging_;
  std::vector<VkDeviceSize> results_at_;
  VkDeviceSize canaries_at_ = 0;
  std::string error_;
};

bool fail(const std::string& why, std::string* error) {
  if (error) *error = why;
  return false;
}

// The SortInfo of `count` keys from key_words and values from value_span (with_values: a values
// buffer, poisoned where value_span is empty), with poisoned temporaries if `temps`.
SortInfo guardedSortInfo(Guarded& g, uint32_t count, std::span<const uint32_t> key_words,
                         std::span<const uint32_t> value_span, bool with_values, bool temps,
                         const MemoryRequirements& req, const SortOptions& o) {
  SortInfo si = sortInfoFor(o, count);
  const VkDeviceSize key_bytes = VkDeviceSize{count} * 4 * wordsPerKey(o);
  const VkDeviceSize value_bytes = VkDeviceSize{count} * 4;
  si.keys = g.add(key_bytes, req.usage, key_words.data());
  if (temps) si.keys_temp = g.add(key_bytes, req.usage, nullptr);
  if (with_values) {
    si.values = g.add(value_bytes, req.usage, value_span.empty() ? nullptr : value_span.data());
    if (temps) si.values_temp = g.add(value_bytes, req.usage, nullptr);
  }
  si.internal = g.add(req.internal_size, req.internal_usage, nullptr);
  return si;
}

// What a checked segmented sort or top-k read back.
struct SegmentedOutput {
  const uint32_t* keys = nullptr;    // the sorted keys, or top-k's segments * k slots
  const uint32_t* values = nullptr;  // the same for values, with values or argsort
  uint32_t segments = 0;             // 1 for top-k of the whole input
  uint32_t k = 0;                    // top-k: the slots per segment the GPU was given, as Context gives
  SortResult sorted{};               // segmented sorts: where the result was on the GPU
  bool canaries_intact = false;
};

// A segmented sort, or with top_k top-k (offsets empty: of the whole input), in g's buffers,
// given the GPU as Context gives it. with_values: a values buffer is used (value_span may then be
// empty, for argsort).
bool runSegmented(Context& ctx, Guarded& g, std::span<const uint32_t> key_words, std::span<const uint32_t> value_span,
                  bool with_values, std::span<const uint32_t> offsets, const SortOptions& o, bool top_k, uint32_t k,
                  bool largest, SegmentedOutput* out, std::string* error) {
  const Sorter* sorter = ctx.sorter();
  const uint32_t w = wordsPerKey(o);
  uint32_t n = 0;
  if (!ctx.checkInput(key_words.size(), value_span.size(), o, !top_k, &n, error)) return false;
  const bool whole = top_k && offsets.empty();
  if (!whole)
    if (const char* why = validateSegmentOffsets(offsets, n)) return fail(why, error);
  const uint32_t segments = whole ? 1 : static_cast<uint32_t>(offsets.size() - 1);
  uint32_t longest = whole ? n : 0;
  for (uint32_t s = 0; s < segments && !whole; ++s) longest = std::max(longest, offsets[s + 1] - offsets[s]);
  out->segments = segments;
  // As Context: no segment fills more than `longest` slots; k = 0 goes on to validateTopKInfo's
  // refusal.
  out->k = top_k && k ? std::max(1u, std::min(k, longest)) : 0;
  const MemoryRequirements req = top_k
                                     ? getTopKMemoryRequirements(sorter, n, segments, out->k, with_values, o.key_type)
                                     : getSegmentedMemoryRequirements(sorter, n, segments, with_values, o.key_type);

  SegmentedSortInfo info;
  info.sort = guardedSortInfo(g, n, key_words, value_span, with_values, !top_k, req, o);
  if (!whole) {
    info.offsets = g.add(offsets.size_bytes(), req.usage, offsets.data());
    info.segment_count = segments;
    info.max_segment_length = longest;
  }
  const uint64_t slots = uint64_t{segments} * out->k;
  TopKInfo top{info, out->k, largest};
  if (top_k) {
    top.out_keys = g.add(slots * 4 * w, req.usage, nullptr);
    if (with_values) top.out_values = g.add(slots * 4, req.usage, nullptr);
  }
  if (!g.error().empty()) return fail(g.error(), error);
  if (const char* why = top_k ? validateTopKInfo(sorter, top) : validateSegmentedSortInfo(sorter, info))
    return fail(why, error);

  const std::vector<VkDeviceSize> result_bytes =
      top_k ? std::vector<VkDeviceSize>{usedBytes(top.out_keys), usedBytes(top.out_values)}
            : std::vector<VkDeviceSize>{usedBytes(info.sort.keys), usedBytes(info.sort.values)};
  const bool ran = g.run(
      [&](VkCommandBuffer cmd) -> std::vector<VkBuffer> {
        if (top_k) {
          cmdTopK(sorter, cmd, top);
          return {top.out_keys.buffer, top.out_values.buffer};
        }
        out->sorted = cmdSortSegmented(sorter, cmd, info);
        return {out->sorted.keys.buffer, out->sorted.values.buffer};
      },
      result_bytes);
  if (!ran) return fail(g.error(), error);
  out->keys = g.result(0);
  out->values = g.result(1);
  out->canaries_intact = g.canariesIntact();
  return true;
}

}  // namespace

bool checkedSort(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
                 CheckedStats* stats, std::string* error) {
  const Sorter* sorter = ctx.sorter();
  uint32_t n = 0;
  if (!ctx.checkInput(keys.size(), values.size(), options, true, &n, error)) return false;
  const bool with_values = !values.empty();
  const MemoryRequirements req = getMemoryRequirements(sorter, n, with_values, options.key_type);
  Guarded g(ctx);
  const SortInfo si = guardedSortInfo(g, n, keys, values, with_values, true, req, options);
  const BufferRange count =
      options.gpu_count ? g.add(4, req.usage, &options.gpu_count_value) : BufferRange{};
  if (!g.error().empty()) return fail(g.error(), error);
  if (const char* why = validateSortInfo(sorter, si)) return fail(why, error);
  SortResult sorted{};
  const bool ran = g.run(
      [&](VkCommandBuffer cmd) -> std::vector<VkBuffer> {
        sorted = options.gpu_count ? cmdSortIndirect(sorter, cmd, si, count) : cmdSort(sorter, cmd, si);
        return {sorted.keys.buffer, sorted.values.buffer};
      },
      {usedBytes(si.keys), usedBytes(si.values)});
  if (!ran) return fail(g.error(), error);
  if (!keys.empty()) std::memcpy(keys.data(), g.result(0), keys.size_bytes());
  if (!values.empty()) std::memcpy(values.data(), g.result(1), values.size_bytes());
  *stats = {sorted.passes, sorted.in_temp, g.canariesIntact()};
  return true;
}

bool checkedSortSegmented(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values,
                          std::span<const uint32_t> offsets, const SortOptions& options, CheckedStats* stats,
                          std::string* error) {
  Guarded g(ctx);
  SegmentedOutput out;
  if (!runSegmented(ctx, g, keys, values, !values.empty(), offsets, options, false, 0, false, &out, error))
    return false;
  if (!keys.empty()) std::memcpy(keys.data(), out.keys, keys.size_bytes());
  if (!values.empty()) std::memcpy(values.data(), out.values, values.size_bytes());
  *stats = {out.sorted.passes, out.sorted.in_temp, out.canaries_intact};
  return true;
}

bool checkedTopK(Context& ctx, std::span<const uint32_t> keys, std::span<const uint32_t> values,
                 std::span<const uint32_t> offsets, uint32_t k, bool largest, const SortOptions& options,
                 std::vector<uint32_t>* out_keys, std::vector<uint32_t>* out_values, std::string* error) {
  SortOptions o = options;
  o.argsort = o.argsort && out_values;
  const bool with_values = out_values && (o.argsort || !values.empty());
  Guarded g(ctx);
  SegmentedOutput out;
  out_keys->clear();
  if (out_values) out_values->clear();
  if (!runSegmented(ctx, g, keys, o.argsort ? std::span<const uint32_t>{} : values, with_values, offsets, o, true, k,
                    largest, &out, error))
    return false;

  // Segment s's results are at s * out.k, and the slots past a short segment's still hold poison.
  const uint32_t w = wordsPerKey(o);
  const uint32_t n = static_cast<uint32_t>(keys.size() / w);
  bool untouched = true;
  for (uint32_t s = 0; s < out.segments; ++s) {
    const uint32_t kept = std::min(out.k, offsets.empty() ? n : offsets[s + 1] - offsets[s]);
    const uint32_t* first_key = out.keys + size_t{s} * out.k * w;
    out_keys->insert(out_keys->end(), first_key, first_key + size_t{kept} * w);
    untouched = untouched && allAre(first_key + size_t{kept} * w, size_t{out.k - kept} * w, kPoison);
    if (!with_values) continue;
    const uint32_t* first_value = out.values + size_t{s} * out.k;
    out_values->insert(out_values->end(), first_value, first_value + kept);
    untouched = untouched && allAre(first_value + kept, out.k - kept, kPoison);
  }
  if (out.canaries_intact && untouched) return true;
  out_keys->clear();
  if (out_values) out_values->clear();
  return fail(std::string("Top-k wrote ") +
                  (out.canaries_intact ? "into result slots past a short segment" : "past its buffers") +
                  " on the GPU; this is a vren_radix bug, please report it with the input.",
              error);
}

bool canariesIntact(const GpuBuffer& b, VkDeviceSize used) {
  return allAre(static_cast<const uint32_t*>(b.mapped) + used / 4, kCanaryWords, kCanary);
}

}  // namespace vren::radix::test
