// Timing sorts on a Context: the GPU time of each of many sorts of one input, for the
// benchmarks, the CLI's demo and the tests. Built on Context's public API: buffers of its own,
// the sorter's record functions and a timestamp pool.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vren_radix/context.h"

namespace vren::radix::bench {

// Uploads once, then sorts the same input `repetitions` times, restoring it on the GPU before
// each sort outside the timed region. gpu_ms receives one time per sort; the input spans
// receive the last sort's output. Keys, values and options as for Context::sort. Untimed sorts
// first keep the GPU busy for about half a second (at most 2000 sorts), so that the timed ones
// run at the clock a busy GPU runs at. Fails with a sentence where the device has no
// timestamps.
bool timeSorts(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
               int repetitions, std::vector<double>* gpu_ms, std::string* error);

// Like timeSorts, with a timestamp after every dispatch: step_ms receives, per repetition, the
// whole sort's time, then 3 * passes durations (count, scan, scatter of pass 0, then pass 1,
// ...). In a profiling build (VREN_RADIX_SHADER_CLOCKS) `clocks` receives the last sort's clock
// words (radix_shared.h: VREN_RADIX_STATE_CLOCKS), elsewhere nothing.
bool profileSorts(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
                  int repetitions, std::vector<std::vector<double>>* step_ms, std::string* error,
                  std::vector<uint32_t>* clocks = nullptr);

}  // namespace vren::radix::bench
