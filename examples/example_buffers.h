// Shared by the examples: GPU buffers made through a Context and freed with the object, on every
// path out of a function.
#pragma once

#include <deque>
#include <string>

#include "vren_radix/context.h"

namespace vren::radix::examples {

struct Buffers {
  Context& ctx;
  std::deque<GpuBuffer> all;  // add() hands out pointers: no reallocation
  explicit Buffers(Context& c) : ctx(c) {}
  ~Buffers() {
    for (GpuBuffer& b : all) ctx.destroyBuffer(&b);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  // Null on failure, with the reason in *error.
  const GpuBuffer* add(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, std::string* error) {
    GpuBuffer b;
    if (!ctx.createBuffer(size, usage, host_visible, &b, error)) return nullptr;
    all.push_back(b);
    return &all.back();
  }
};

}  // namespace vren::radix::examples
