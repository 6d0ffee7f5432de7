// Warming the GPU up before a timed run.
#pragma once

#include <chrono>

namespace vren::radix::bench {

// Repeats `run` (work that submits and waits) for at least 500 ms of wall-clock time. A GPU that
// idled while the host prepared or checked data runs at a fraction of its clock until it has
// been busy for a while (an H200 at 345-960 MHz instead of 1980 MHz ran 2-5x slower;
// its clock comes back within about 200 ms of steady work). False as soon as `run` fails.
template <typename Run>
bool warmUp(Run&& run) {
  const auto start = std::chrono::steady_clock::now();
  do {
    if (!run()) return false;
  } while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  return true;
}

}  // namespace vren::radix::bench
