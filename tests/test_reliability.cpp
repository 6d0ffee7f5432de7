// Reliability: creation under failing host allocations and failing Vulkan object creation (every
// failure point: an error, a null out-pointer, nothing leaked), preconditions refused with a
// sentence, requirement arithmetic near the largest count, the device limits behind max_count
// (faked through the entry points the library is given), one sorter recorded from several
// threads, and several contexts sorting at once. Runs under the validation layer.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <volk.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpu_test.h"
#include "radix_shared.h"
#include "vren_radix/materials.h"
#include "vren_radix/tiles.h"

namespace vren::radix::test {
namespace {

constexpr uint32_t kPoison = 0xDCDCDCDCu;
constexpr uint32_t kCanary = 0xC0FFEE11u;

// Pipelines that are never compiled, for sorters that only answer queries or are only created
// and destroyed: lavapipe compiles each pipeline at creation, which would make these checks take
// seconds each. Handles count up from 1, and g_uncompiled_live counts those not yet destroyed.
std::atomic<uint64_t> g_uncompiled_next{1};
std::atomic<int64_t> g_uncompiled_live{0};

VKAPI_ATTR VkResult VKAPI_CALL uncompiledPipelines(VkDevice, VkPipelineCache, uint32_t count,
                                                   const VkComputePipelineCreateInfo*, const VkAllocationCallbacks*,
                                                   VkPipeline* pipelines) {
  for (uint32_t i = 0; i < count; ++i) pipelines[i] = reinterpret_cast<VkPipeline>(g_uncompiled_next++);
  g_uncompiled_live += count;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroyUncompiled(VkDevice, VkPipeline pipeline, const VkAllocationCallbacks*) {
  if (pipeline) --g_uncompiled_live;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL uncompiledGetDeviceProcAddr(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkCreateComputePipelines") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(uncompiledPipelines);
  if (std::strcmp(name, "vkDestroyPipeline") == 0) return reinterpret_cast<PFN_vkVoidFunction>(destroyUncompiled);
  return vkGetDeviceProcAddr(device, name);
}

// What both failure injectors below count: calls, the one failed on purpose (the fail_at-th,
// 0-based), and frees of blocks or handles they never handed out.
class FailureCounter {
 public:
  void arm(uint64_t fail_at) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_at_ = fail_at;
    calls_ = 0;
    failures_ = 0;
    foreign_frees_ = 0;
  }
  uint64_t calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  uint64_t failures() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failures_;
  }
  uint64_t foreignFrees() {
    std::lock_guard<std::mutex> lock(mutex_);
    return foreign_frees_;
  }

 protected:
  // Called with mutex_ held: false if this call is the one to fail.
  bool admitLocked() {
    const bool fail = calls_++ == fail_at_;
    failures_ += fail;
    return !fail;
  }

  std::mutex mutex_;
  uint64_t foreign_frees_ = 0;

 private:
  uint64_t fail_at_ = UINT64_MAX;
  uint64_t calls_ = 0;
  uint64_t failures_ = 0;
};

// Host allocation callbacks that fail the fail_at-th allocation or reallocation (0-based) and
// keep count of the blocks still live.
class FailingAllocator : public FailureCounter {
 public:
  FailingAllocator() {
    callbacks_.pUserData = this;
    callbacks_.pfnAllocation = allocate;
    callbacks_.pfnReallocation = reallocate;
    callbacks_.pfnFree = release;
  }

  const VkAllocationCallbacks* callbacks() const { return &callbacks_; }

  size_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }

 private:
  void* take(size_t size, size_t alignment) {
    void* pointer = nullptr;
    if (posix_memalign(&pointer, std::max(alignment, sizeof(void*)), std::max<size_t>(size, 1)) != 0) return nullptr;
    live_[pointer] = size;
    return pointer;
  }

  static VKAPI_ATTR void* VKAPI_CALL allocate(void* user, size_t size, size_t alignment, VkSystemAllocationScope) {
    auto* self = static_cast<FailingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (size == 0 || !self->admitLocked()) return nullptr;
    return self->take(size, alignment);
  }

  static VKAPI_ATTR void* VKAPI_CALL reallocate(void* user, void* original, size_t size, size_t alignment,
                                                VkSystemAllocationScope scope) {
    if (!original) return allocate(user, size, alignment, scope);
    if (size == 0) {
      release(user, original);
      return nullptr;
    }
    auto* self = static_cast<FailingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    auto it = self->live_.find(original);
    if (it == self->live_.end()) {
      ++self->foreign_frees_;
      return nullptr;
    }
    if (!self->admitLocked()) return nullptr;  // the original stays valid, as the spec asks
    const size_t old_size = it->second;
    void* pointer = self->take(size, alignment);
    if (!pointer) return nullptr;
    std::memcpy(pointer, original, std::min(old_size, size));
    self->live_.erase(original);
    std::free(original);
    return pointer;
  }

  static VKAPI_ATTR void VKAPI_CALL release(void* user, void* pointer) {
    if (!pointer) return;
    auto* self = static_cast<FailingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (self->live_.erase(pointer) == 0) {
      ++self->foreign_frees_;
      return;
    }
    std::free(pointer);
  }

  VkAllocationCallbacks callbacks_{};
  std::unordered_map<void*, size_t> live_;
};

// Vulkan object creation through wrapped device entry points: the fail_at-th vkCreate* call
// (0-based) returns VK_ERROR_OUT_OF_DEVICE_MEMORY without reaching the driver, and the shader
// modules, pipeline layouts and pipelines (uncompiled ones) still alive are counted. Drivers may ignore
// pAllocator for some objects (lavapipe does for pipelines and layouts), so this sees leaks that
// the allocation callbacks cannot.
class FailingObjects : public FailureCounter {
 public:
  static PFN_vkGetDeviceProcAddr getDeviceProcAddr() { return wrappedGetDeviceProcAddr; }

  size_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }

 private:
  static FailingObjects& self() {
    static FailingObjects instance;
    return instance;
  }
  template <typename Handle>
  static uint64_t key(Handle h) {
    return reinterpret_cast<uint64_t>(h);
  }
  bool admit() {
    std::lock_guard<std::mutex> lock(mutex_);
    return admitLocked();
  }
  void add(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(handle);
  }
  // False for a handle this tracker never saw created (it then stays away from the driver).
  bool remove(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_.erase(handle)) return true;
    ++foreign_frees_;
    return false;
  }

  static VKAPI_ATTR VkResult VKAPI_CALL createShaderModule(VkDevice device, const VkShaderModuleCreateInfo* info,
                                                           const VkAllocationCallbacks* allocator,
                                                           VkShaderModule* module) {
    if (!self().admit()) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    const VkResult result = self().create_module_(device, info, allocator, module);
    if (result == VK_SUCCESS) self().add(key(*module));
    return result;
  }
  static VKAPI_ATTR void VKAPI_CALL destroyShaderModule(VkDevice device, VkShaderModule module,
                                                        const VkAllocationCallbacks* allocator) {
    if (module && self().remove(key(module))) self().destroy_module_(device, module, allocator);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL createPipelineLayout(VkDevice device, const VkPipelineLayoutCreateInfo* info,
                                                             const VkAllocationCallbacks* allocator,
                                                             VkPipelineLayout* layout) {
    if (!self().admit()) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    const VkResult result = self().create_layout_(device, info, allocator, layout);
    if (result == VK_SUCCESS) self().add(key(*layout));
    return result;
  }
  static VKAPI_ATTR void VKAPI_CALL destroyPipelineLayout(VkDevice device, VkPipelineLayout layout,
                                                          const VkAllocationCallbacks* allocator) {
    if (layout && self().remove(key(layout))) self().destroy_layout_(device, layout, allocator);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL createComputePipelines(VkDevice device, VkPipelineCache cache, uint32_t count,
                                                               const VkComputePipelineCreateInfo* infos,
                                                               const VkAllocationCallbacks* allocator,
                                                               VkPipeline* pipelines) {
    if (!self().admit()) {
      std::fill(pipelines, pipelines + count, VK_NULL_HANDLE);  // as the spec asks of a driver
      return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    const VkResult result = self().create_pipelines_(device, cache, count, infos, allocator, pipelines);
    for (uint32_t i = 0; i < count; ++i)
      if (pipelines[i]) self().add(key(pipelines[i]));
    return result;
  }
  static VKAPI_ATTR void VKAPI_CALL destroyPipeline(VkDevice device, VkPipeline pipeline,
                                                    const VkAllocationCallbacks* allocator) {
    if (pipeline && self().remove(key(pipeline))) self().destroy_pipeline_(device, pipeline, allocator);
  }

  template <typename Fn>
  static PFN_vkVoidFunction wrap(PFN_vkVoidFunction real, Fn* slot, Fn wrapper) {
    *slot = reinterpret_cast<Fn>(real);
    return real ? reinterpret_cast<PFN_vkVoidFunction>(wrapper) : nullptr;
  }
  static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL wrappedGetDeviceProcAddr(VkDevice device, const char* name) {
    FailingObjects& t = self();
    const PFN_vkVoidFunction real = vkGetDeviceProcAddr(device, name);
    const std::string n = name;
    if (n == "vkCreateShaderModule") return wrap(real, &t.create_module_, createShaderModule);
    if (n == "vkDestroyShaderModule") return wrap(real, &t.destroy_module_, destroyShaderModule);
    if (n == "vkCreatePipelineLayout") return wrap(real, &t.create_layout_, createPipelineLayout);
    if (n == "vkDestroyPipelineLayout") return wrap(real, &t.destroy_layout_, destroyPipelineLayout);
    // Pipelines are counted, not compiled: what is checked is that each one made is destroyed.
    if (n == "vkCreateComputePipelines")
      return wrap(reinterpret_cast<PFN_vkVoidFunction>(uncompiledPipelines), &t.create_pipelines_,
                  createComputePipelines);
    if (n == "vkDestroyPipeline")
      return wrap(reinterpret_cast<PFN_vkVoidFunction>(destroyUncompiled), &t.destroy_pipeline_, destroyPipeline);
    return real;
  }

  PFN_vkCreateShaderModule create_module_ = nullptr;
  PFN_vkDestroyShaderModule destroy_module_ = nullptr;
  PFN_vkCreatePipelineLayout create_layout_ = nullptr;
  PFN_vkDestroyPipelineLayout destroy_layout_ = nullptr;
  PFN_vkCreateComputePipelines create_pipelines_ = nullptr;
  PFN_vkDestroyPipeline destroy_pipeline_ = nullptr;
  std::set<uint64_t> live_;

  friend FailingObjects& failingObjects();
};

FailingObjects& failingObjects() {
  return FailingObjects::self();
}

// Fails step k = 0, 1, 2, ... (an allocation, or an object creation) of `create` until a
// creation sees no failure. Every failed creation must return the injected error, leave the
// out-pointer null, say why, and release all it took; the successful one must release
// everything on destroy. Returns the number of steps the successful creation made.
template <typename Object, typename Injector, typename Create, typename Destroy>
uint64_t createUnderFailures(const char* what, Injector& injector, VkResult injected, Create create, Destroy destroy) {
  constexpr uint64_t kMaxSteps = 100000;
  for (uint64_t k = 0; k < kMaxSteps; ++k) {
    INFO(what << ": step " << k << " fails");
    injector.arm(k);
    Object* object = reinterpret_cast<Object*>(uintptr_t{16});  // must be overwritten
    std::string why;
    const VkResult result = create(&object, &why);
    const bool failed_one = injector.failures() > 0;
    if (result == VK_SUCCESS) {
      REQUIRE(object != nullptr);
      const uint64_t steps = injector.calls();
      destroy(object);
      CHECK(injector.live() == 0);
      CHECK(injector.foreignFrees() == 0);
      // A driver may survive a failed allocation (e.g. a cache); then keep going.
      if (!failed_one) {
        injector.arm(UINT64_MAX);
        return steps;
      }
      continue;
    }
    REQUIRE(failed_one);  // nothing else may make creation fail here
    CHECK(result == injected);
    CHECK(object == nullptr);
    CHECK(!why.empty());
    CHECK(injector.live() == 0);
    CHECK(injector.foreignFrees() == 0);
  }
  FAIL(what << ": creation still fails after " << kMaxSteps << " steps");
  return 0;
}

// Creates each kind of object with `configure` applied to its create info, failing step k of
// `injector` for every k, and returns the step counts of the sorter, the tile packer and the
// material sorter.
template <typename Injector, typename Configure>
std::vector<uint64_t> createEachUnderFailures(Context& ctx, Injector& injector, VkResult injected,
                                              Configure configure) {
  std::vector<uint64_t> steps;
  steps.push_back(createUnderFailures<Sorter>(
      "createSorter", injector, injected,
      [&](Sorter** out, std::string* why) {
        SorterCreateInfo info = ctx.createInfo<SorterCreateInfo>();
        configure(info.allocator, info.get_device_proc_addr);
        return createSorter(info, out, why);
      },
      destroySorter));
  steps.push_back(createUnderFailures<TilePacker>(
      "createTilePacker", injector, injected,
      [&](TilePacker** out, std::string* why) {
        TilePackerCreateInfo info = ctx.createInfo<TilePackerCreateInfo>();
        configure(info.allocator, info.get_device_proc_addr);
        return createTilePacker(info, out, why);
      },
      destroyTilePacker));
  steps.push_back(createUnderFailures<MaterialSorter>(
      "createMaterialSorter", injector, injected,
      [&](MaterialSorter** out, std::string* why) {
        MaterialSorterCreateInfo info = ctx.createInfo<MaterialSorterCreateInfo>();
        configure(info.allocator, info.get_device_proc_addr);
        return createMaterialSorter(info, out, why);
      },
      destroyMaterialSorter));
  return steps;
}

std::string describeSteps(const std::vector<uint64_t>& steps) {
  return "sorter " + std::to_string(steps[0]) + ", tile packer " + std::to_string(steps[1]) + ", material sorter " +
         std::to_string(steps[2]);
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "reliability: creation under failing host allocations leaks nothing" *
                               doctest::test_suite("host")) {
  FailingAllocator allocator;
  // lavapipe makes pipelines without the callbacks: there they are counted, not compiled.
  const bool cpu = onCpuDevice();
  const std::vector<uint64_t> steps = createEachUnderFailures(
      context(), allocator, VK_ERROR_OUT_OF_HOST_MEMORY,
      [&](const VkAllocationCallbacks*& callbacks, PFN_vkGetDeviceProcAddr& gdpa) {
        callbacks = allocator.callbacks();
        if (cpu) gdpa = uncompiledGetDeviceProcAddr;
      });
  CHECK(g_uncompiled_live == 0);
  MESSAGE("host allocations through the callbacks while creating: " << describeSteps(steps));
  // The callbacks must reach the driver, or this test proves nothing.
  for (uint64_t n : steps) CHECK(n > 0);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: creation under failing Vulkan object creation leaks nothing" *
                               doctest::test_suite("host")) {
  FailingObjects& objects = failingObjects();
  const std::vector<uint64_t> steps = createEachUnderFailures(
      context(), objects, VK_ERROR_OUT_OF_DEVICE_MEMORY,
      [](const VkAllocationCallbacks*&, PFN_vkGetDeviceProcAddr& gdpa) { gdpa = FailingObjects::getDeviceProcAddr(); });
  MESSAGE("shader module, layout and pipeline creations: " << describeSteps(steps));
  for (uint64_t n : steps) CHECK(n >= 3);
}

namespace {

// Real buffers for precondition checks (validation reads their device addresses).
struct Buffers {
  explicit Buffers(Context& c) : ctx(c) {}
  ~Buffers() {
    for (GpuBuffer& b : list) ctx.destroyBuffer(&b);
  }
  VkBuffer make(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible = false) {
    GpuBuffer b;
    std::string error;
    REQUIRE_MESSAGE(ctx.createBuffer(size, usage, host_visible, &b, &error), error);
    list.push_back(b);
    return b.buffer;
  }
  Context& ctx;
  std::vector<GpuBuffer> list;
};

// A refusal must be one sentence that names the problem.
void checkRefused(const char* message, const char* expected_words, const char* what) {
  INFO(what);
  REQUIRE(message != nullptr);
  const std::string m = message;
  INFO("message: " << m);
  CHECK(m.size() > 10);
  CHECK(m.back() == '.');
  CHECK(m.find(expected_words) != std::string::npos);
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "reliability: validateSortInfo refuses each bad input with a sentence" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  const Sorter* sorter = ctx.sorter();
  const SorterProperties props = getSorterProperties(sorter);
  const uint32_t n = 1000;
  const MemoryRequirements req = getMemoryRequirements(sorter, n, true);
  REQUIRE(req.alignment >= 8);
  const VkDeviceSize bytes = VkDeviceSize{n} * 4;
  const VkDeviceSize align = req.alignment;
  Buffers buffers(ctx);
  // One buffer holds keys and values back to back (allowed: they do not overlap).
  const VkBuffer data = buffers.make(2 * bytes + 4 * align, req.usage);
  const VkBuffer temps = buffers.make(2 * bytes + 4 * align, req.usage);
  const VkBuffer internal = buffers.make(req.internal_size + 4 * align, req.internal_usage);

  SortInfo good;
  good.count = n;
  good.keys = {data, 0, bytes};
  good.values = {data, bytes, bytes};  // 4000: a multiple of 16
  good.keys_temp = {temps, 0, bytes};
  good.values_temp = {temps, bytes, bytes};
  good.internal = {internal, 0, req.internal_size};
  REQUIRE(bytes % align == 0);
  CHECK(validateSortInfo(sorter, good) == nullptr);
  SortInfo whole = good;
  for (BufferRange* r : {&whole.keys, &whole.keys_temp, &whole.internal}) r->size = VK_WHOLE_SIZE;
  whole.values = {};
  whole.values_temp = {};
  CHECK(validateSortInfo(sorter, whole) == nullptr);

  struct Case {
    const char* what;
    const char* words;
    void (*spoil)(SortInfo&, VkDeviceSize bytes, VkDeviceSize alignment, uint32_t max_count);
  };
  const Case cases[] = {
      {"end_bit past 32", "bit range", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.end_bit = 33; }},
      {"begin_bit after end_bit", "bit range",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.begin_bit = 9;
         i.end_bit = 8;
       }},
      {"both bits past 32", "bit range",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.begin_bit = 40;
         i.end_bit = 40;
       }},
      {"64-bit keys past bit 64", "bit range",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.key_type = KeyType::kU64;
         i.end_bit = 65;
       }},
      {"argsort without values", "argsort",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.argsort = true;
         i.values = {};
         i.values_temp = {};
       }},
      {"64-bit keys in 32-bit-key buffers", "keys buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.key_type = KeyType::kU64;
         i.end_bit = 64;
       }},
      {"count above max_count", "count",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t max) { i.count = max + 1; }},
      {"no keys", "required", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys = {}; }},
      {"no keys_temp", "required", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp = {}; }},
      {"no internal", "required", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.internal = {}; }},
      {"values without values_temp", "values_temp",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values_temp = {}; }},
      {"keys too small", "keys buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys.size -= 4; }},
      {"keys_temp too small", "keys buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp.size -= 4; }},
      {"values too small", "values buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values.size -= 4; }},
      {"values_temp too small", "values buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values_temp.size = 0; }},
      {"internal too small", "internal buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.internal.size -= 4; }},
      {"keys offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize a, uint32_t) { i.keys.offset += a / 2; }},
      {"keys_temp offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp.offset += 4; }},
      {"values offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values.offset += 4; }},
      {"values_temp offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values_temp.offset += 8; }},
      {"internal offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.internal.offset += 4; }},
      {"keys_temp overlaps keys", "overlap",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize a, uint32_t) {
         i.keys_temp = {i.keys.buffer, a, i.keys.size};
       }},
      {"values overlap keys", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize a, uint32_t) { i.values.offset = b - a; }},
      {"values_temp overlaps values", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize, uint32_t) {
         i.values_temp = {i.values.buffer, b, b};
       }},
      {"values_temp overlaps keys_temp", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize a, uint32_t) { i.values_temp.offset = b - 2 * a; }},
      {"keys are their own temp", "overlap",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp = i.keys; }},
      {"internal overlaps keys", "overlap",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.internal.buffer = i.keys.buffer;
         i.internal.offset = 0;
       }},
      {"internal overlaps values_temp", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize, uint32_t) {
         i.internal.buffer = i.values_temp.buffer;
         i.internal.offset = b + b / 2 / 16 * 16;
       }},
  };
  for (const Case& c : cases) {
    SortInfo bad = good;
    c.spoil(bad, bytes, align, props.max_count);
    if (bad.count == 0) continue;  // max_count == UINT32_MAX: no count is too large
    checkRefused(validateSortInfo(sorter, bad), c.words, c.what);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: validateTilePackInfo refuses each bad input with a sentence" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  TilePacker* raw = nullptr;
  std::string why;
  REQUIRE_MESSAGE(createTilePacker(ctx.createInfo<TilePackerCreateInfo>(), &raw, &why) == VK_SUCCESS, why);
  struct Destroy {
    void operator()(TilePacker* p) const { destroyTilePacker(p); }
  };
  std::unique_ptr<TilePacker, Destroy> packer(raw);
  const uint32_t w = 100, h = 70;
  const TileMemoryRequirements req = getTileMemoryRequirements(packer.get(), w, h);
  const VkDeviceSize key_bytes = VkDeviceSize{w} * h * 4;
  Buffers buffers(ctx);
  const VkBuffer keys = buffers.make(key_bytes + 64, req.usage);
  const VkBuffer out = buffers.make(req.pixels_size + req.containers_size + req.tile_ranges_size + 64, req.usage);
  const VkBuffer counter = buffers.make(16, req.usage);

  TilePackInfo good;
  good.width = w;
  good.height = h;
  good.keys = {keys, 0, key_bytes};
  good.counter = {counter, 0, 4};
  good.pixels = {out, 0, req.pixels_size};
  good.containers = {out, req.pixels_size, req.containers_size};
  good.tile_ranges = {out, req.pixels_size + req.containers_size, req.tile_ranges_size};
  CHECK(validateTilePackInfo(packer.get(), good) == nullptr);

  struct Case {
    const char* what;
    const char* words;
    void (*spoil)(TilePackInfo&);
  };
  const Case cases[] = {
      {"width past 65535", "65535", [](TilePackInfo& i) { i.width = kMaxTileScreenSize + 1; }},
      {"height past 65535", "65535", [](TilePackInfo& i) { i.height = kMaxTileScreenSize + 1; }},
      {"probes past 15", "probes", [](TilePackInfo& i) { i.probes = kMaxTileProbes + 1; }},
      {"no keys", "required", [](TilePackInfo& i) { i.keys = {}; }},
      {"no counter", "required", [](TilePackInfo& i) { i.counter = {}; }},
      {"no pixels", "required", [](TilePackInfo& i) { i.pixels = {}; }},
      {"no tile_ranges", "required", [](TilePackInfo& i) { i.tile_ranges = {}; }},
      {"keys offset misaligned", "multiples", [](TilePackInfo& i) { i.keys.offset = 2; }},
      {"counter offset misaligned", "multiples", [](TilePackInfo& i) { i.counter.offset = 1; }},
      {"pixels offset misaligned", "multiples", [](TilePackInfo& i) { i.pixels.offset = 2; }},
      {"containers offset misaligned", "multiples", [](TilePackInfo& i) { i.containers.offset += 2; }},
      {"tile_ranges offset misaligned", "multiples", [](TilePackInfo& i) { i.tile_ranges.offset += 3; }},
      {"keys too small", "keys buffer is smaller", [](TilePackInfo& i) { i.keys.size -= 4; }},
      {"counter too small", "counter buffer is smaller", [](TilePackInfo& i) { i.counter.size = 0; }},
      {"pixels too small", "pixels buffer is smaller", [](TilePackInfo& i) { i.pixels.size -= 4; }},
      {"containers too small", "containers buffer is smaller", [](TilePackInfo& i) { i.containers.size -= 4; }},
      {"tile_ranges too small", "tile_ranges buffer is smaller", [](TilePackInfo& i) { i.tile_ranges.size -= 8; }},
      {"containers overlap pixels", "overlap", [](TilePackInfo& i) { i.containers.offset -= 4; }},
      {"tile_ranges overlap containers", "overlap", [](TilePackInfo& i) { i.tile_ranges.offset -= 8; }},
      {"counter inside the keys", "overlap",
       [](TilePackInfo& i) {
         i.counter = {i.keys.buffer, 400, 4};
       }},
      {"pixels over the keys", "overlap", [](TilePackInfo& i) { i.pixels.buffer = i.keys.buffer; }},
  };
  for (const Case& c : cases) {
    TilePackInfo bad = good;
    c.spoil(bad);
    checkRefused(validateTilePackInfo(packer.get(), bad), c.words, c.what);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: Context::sort refuses mismatched or oversized input" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  std::vector<uint32_t> keys(100, 7), more(101, 1), fewer(99, 1);
  std::string error;
  CHECK_FALSE(ctx.sort(keys, more, {}, nullptr, &error));
  CHECK(error.find("values") != std::string::npos);
  CHECK(error.back() == '.');
  error.clear();
  CHECK_FALSE(ctx.sort(keys, fewer, {}, nullptr, &error));
  CHECK(!error.empty());
  error.clear();
  CHECK_FALSE(ctx.sort({}, more, {}, nullptr, &error));
  CHECK(!error.empty());
  error.clear();
  SortOptions bits;
  bits.begin_bit = 4;
  bits.end_bit = 40;
  CHECK_FALSE(ctx.sort(keys, {}, bits, nullptr, &error));
  CHECK(error.find("bit") != std::string::npos);

  // One key more than the device allows, in reserved but inaccessible address space: the
  // count must be refused before any key is touched.
  const uint64_t too_many = uint64_t{ctx.maxCount()} + 1;
  if (too_many <= UINT32_MAX) {
    const size_t bytes = static_cast<size_t>(too_many * 4);
    void* reserved = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(reserved != MAP_FAILED);
    error.clear();
    CHECK_FALSE(ctx.sort(std::span<uint32_t>(static_cast<uint32_t*>(reserved), static_cast<size_t>(too_many)), {}, {},
                         nullptr, &error));
    CHECK(error.find("limit") != std::string::npos);
    munmap(reserved, bytes);
  }
  // The context still sorts afterwards.
  std::vector<uint32_t> small = {3, 1, 2};
  REQUIRE_MESSAGE(ctx.sort(small, {}, {}, nullptr, &error), error);
  CHECK(small == std::vector<uint32_t>{1, 2, 3});
}

namespace {

// Device limits reported to the library through a wrapped vkGetInstanceProcAddr: the library
// reads the device only through the entry points it is given.
struct FakeLimits {
  uint64_t max_allocation = 0;  // 0: the device's own
  uint32_t groups_x = 0;
  uint32_t groups_y = 0;
  uint32_t vendor_id = 0;        // 0: the device's own
  uint32_t max_invocations = 0;  // workgroup size; 0: the device's own
};
FakeLimits g_fake;
PFN_vkGetPhysicalDeviceProperties2 g_real_properties2 = nullptr;

VKAPI_ATTR void VKAPI_CALL fakeProperties2(VkPhysicalDevice device, VkPhysicalDeviceProperties2* properties) {
  g_real_properties2(device, properties);
  VkPhysicalDeviceLimits& limits = properties->properties.limits;
  if (g_fake.groups_x) limits.maxComputeWorkGroupCount[0] = g_fake.groups_x;
  if (g_fake.groups_y) limits.maxComputeWorkGroupCount[1] = g_fake.groups_y;
  if (g_fake.vendor_id) properties->properties.vendorID = g_fake.vendor_id;
  if (g_fake.max_invocations) {
    limits.maxComputeWorkGroupInvocations = g_fake.max_invocations;
    limits.maxComputeWorkGroupSize[0] = std::min(limits.maxComputeWorkGroupSize[0], g_fake.max_invocations);
  }
  for (auto* s = static_cast<VkBaseOutStructure*>(properties->pNext); s; s = s->pNext) {
    if (g_fake.max_allocation && s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceVulkan11Properties*>(s)->maxMemoryAllocationSize = g_fake.max_allocation;
    if (g_fake.max_allocation && s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceMaintenance3Properties*>(s)->maxMemoryAllocationSize = g_fake.max_allocation;
  }
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fakeGetInstanceProcAddr(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetPhysicalDeviceProperties2") == 0 ||
      std::strcmp(name, "vkGetPhysicalDeviceProperties2KHR") == 0) {
    g_real_properties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(vkGetInstanceProcAddr(instance, name));
    return g_real_properties2 ? reinterpret_cast<PFN_vkVoidFunction>(fakeProperties2) : nullptr;
  }
  return vkGetInstanceProcAddr(instance, name);
}

struct SorterDeleter {
  void operator()(Sorter* s) const {
    destroySorter(s);
    CHECK(g_uncompiled_live == 0);
  }
};
using SorterPtr = std::unique_ptr<Sorter, SorterDeleter>;

// The test context's tuning with digits of the given width.
// The device's tuning on these digits, its look-back limited to small sorts (as on devices
// without a measured tuning), so that the internal block past it grows with the passes' tiles.
TuningConfig withDigits(uint32_t digit_bits) {
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.digit_bits = digit_bits;
  tuning.lookback_max_count = std::min(tuning.lookback_max_count, 1u << 20);
  return tuning;
}

enum class Pipelines { kUncompiled, kCompiled };

// tuning null: the device's choice. Uncompiled sorters answer queries and validation only: they
// must not record.
SorterPtr fakeSorter(const FakeLimits& limits, const TuningConfig* tuning = nullptr,
                     Pipelines pipelines = Pipelines::kUncompiled) {
  g_fake = limits;
  SorterCreateInfo info = context().createInfo<SorterCreateInfo>();
  info.get_instance_proc_addr = fakeGetInstanceProcAddr;
  if (pipelines == Pipelines::kUncompiled) info.get_device_proc_addr = uncompiledGetDeviceProcAddr;
  info.tuning = tuning;
  Sorter* s = nullptr;
  std::string why;
  const VkResult result = createSorter(info, &s, &why);
  g_fake = {};
  REQUIRE_MESSAGE(result == VK_SUCCESS, why);
  return SorterPtr(s);
}

uint64_t divCeil(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

uint32_t tileOf(const TuningConfig& t) {
  return t.workgroup_size * t.keys_per_thread;
}

// Internal bytes per tile of the smaller tile, past the small sorts' look-back (whose published
// words make the internal block of small counts larger): at 2^30 keys the per-tile counts
// outweigh it whatever the tuning.
constexpr uint32_t kPastLookback = 1u << 30;
uint64_t internalPerTile(const Sorter* s, uint32_t tile) {
  return getMemoryRequirements(s, kPastLookback + tile, false).internal_size -
         getMemoryRequirements(s, kPastLookback, false).internal_size;
}

// What max_count must respect on a device with these limits: every buffer for max_count keys
// of any type fits one allocation, every tile gets a workgroup of the 2D grid, and u32 element
// indices do not wrap inside the last tile. It must also not give away more than half of what
// the tightest limit allows.
void checkMaxCount(const Sorter* s, uint64_t max_allocation, uint32_t groups_x, uint32_t groups_y) {
  const SorterProperties props = getSorterProperties(s);
  const uint64_t max = props.max_count;
  INFO("max_count " << max << ", allocation " << max_allocation << ", grid " << groups_x << " x " << groups_y);
  const uint64_t tile_small = std::min(tileOf(props.tuning), tileOf(props.tuning_u64));
  const uint64_t tile_large = std::max(tileOf(props.tuning), tileOf(props.tuning_u64));
  CHECK(props.tile_size == tileOf(props.tuning));
  CHECK(max >= 1);
  for (KeyType type : {KeyType::kU32, KeyType::kI32, KeyType::kF32, KeyType::kU64}) {
    const MemoryRequirements req = getMemoryRequirements(s, props.max_count, true, type);
    CHECK(req.keys_temp_size <= max_allocation);
    CHECK(req.values_temp_size <= max_allocation);
    CHECK(req.internal_size <= max_allocation);
  }
  CHECK(divCeil(max, tile_small) <= uint64_t{groups_x} * groups_y);
  CHECK(max + tile_large <= (uint64_t{1} << 32));
  const uint64_t groups = uint64_t{groups_x} * groups_y;  // below 2^64; times a tile it may not be
  const uint64_t by_grid = groups > (uint64_t{1} << 40) ? UINT64_MAX : groups * tile_small;
  // The internal buffer: its words are indexed in u32 by the shaders.
  const uint64_t internal_per_tile = internalPerTile(s, static_cast<uint32_t>(tile_small));
  REQUIRE(internal_per_tile > 0);
  CHECK(getMemoryRequirements(s, props.max_count, false).internal_size <= (uint64_t{1} << 34));
  const uint64_t by_internal = std::min(max_allocation, uint64_t{1} << 34) / internal_per_tile * tile_small;
  const uint64_t tightest = std::min({max_allocation / 8, by_grid, uint64_t{1} << 31, by_internal});
  CHECK(max >= tightest / 2);
}

// Exact sizes: count keys of the type's width in each ping-pong buffer, count u32 values, and
// an internal block that never shrinks as the count grows, affine in the tile count of the
// smaller tile past the look-back's reach.
void checkRequirements(const Sorter* s, uint32_t count) {
  INFO("count " << count);
  const SorterProperties props = getSorterProperties(s);
  const uint64_t tile = std::min(tileOf(props.tuning), tileOf(props.tuning_u64));
  const uint64_t per_tile = internalPerTile(s, static_cast<uint32_t>(tile));
  REQUIRE(per_tile > 0);
  const uint64_t past_lookback = getMemoryRequirements(s, kPastLookback, false).internal_size;
  const uint64_t n = std::max(count, 1u);
  for (KeyType type : {KeyType::kU32, KeyType::kF32, KeyType::kU64}) {
    const uint64_t key_bytes = type == KeyType::kU64 ? 8 : 4;
    const MemoryRequirements keys = getMemoryRequirements(s, count, false, type);
    const MemoryRequirements pairs = getMemoryRequirements(s, count, true, type);
    CHECK(keys.keys_temp_size == n * key_bytes);
    CHECK(keys.values_temp_size == 0);
    CHECK(pairs.keys_temp_size == n * key_bytes);
    CHECK(pairs.values_temp_size == n * 4);
    if (count >= kPastLookback)
      CHECK(keys.internal_size == past_lookback + per_tile * (divCeil(count, tile) - kPastLookback / tile));
    CHECK(keys.internal_size >= getMemoryRequirements(s, count / 2, false, type).internal_size);
    // Look-back sorts: two sets of 256 published words per tile.
    const TuningConfig& t = type == KeyType::kU64 ? props.tuning_u64 : props.tuning;
    const uint64_t lookback_tile = type == KeyType::kU64 ? props.lookback_tile_size_u64 : props.lookback_tile_size;
    if (lookback_tile > 0 && count <= t.lookback_max_count && divCeil(count, lookback_tile) <= 1024)
      CHECK(keys.internal_size >= 2048 * std::max<uint64_t>(1, divCeil(count, lookback_tile)));
    CHECK(pairs.internal_size == keys.internal_size);
    CHECK(keys.internal_size % 4 == 0);
    CHECK(keys.alignment > 0);
    CHECK((keys.alignment & (keys.alignment - 1)) == 0);
    CHECK((keys.usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT) != 0);
    CHECK((keys.usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) != 0);
  }
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "reliability: max_count follows the device's limits" * doctest::test_suite("host")) {
  Context& ctx = context();
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physicalDevice(), &props);
  const uint32_t* grid = props.limits.maxComputeWorkGroupCount;
  // The device's limits and tuning (its look-back limited, see withDigits).
  const TuningConfig device_tuning = withDigits(getSorterProperties(ctx.sorter()).tuning.digit_bits);
  checkMaxCount(fakeSorter({}, &device_tuning).get(), ctx.device().max_allocation_size, grid[0], grid[1]);
  MESSAGE("max_count " << ctx.maxCount() << " (largest allocation " << ctx.device().max_allocation_size
                       << " bytes, grid " << grid[0] << " x " << grid[1] << ", tile "
                       << getSorterProperties(ctx.sorter()).tile_size << ")");

  // Devices faked through the entry points: plenty of everything, memory-bound (including
  // sizes that are not multiples of 8), grid-bound.
  const FakeLimits fakes[] = {
      {uint64_t{1} << 40, 0x7FFFFFFFu, 65535},
      {uint64_t{1} << 40, 0xFFFFFFFFu, 0xFFFFFFFFu},
      {uint64_t{1} << 30, 0x7FFFFFFFu, 65535},
      {(uint64_t{1} << 33) - 1, 0x7FFFFFFFu, 65535},
      {(uint64_t{1} << 34) + 3, 65535, 65535},
      {1000003, 65535, 65535},
      {uint64_t{1} << 40, 65535, 1},
      {uint64_t{1} << 40, 1, 1},
      {uint64_t{1} << 40, 1000, 3},
  };
  for (uint32_t digit_bits : {4u, 8u}) {
    const TuningConfig tuning = withDigits(digit_bits);
    for (const FakeLimits& f : fakes)
      checkMaxCount(fakeSorter(f, &tuning).get(), f.max_allocation, f.groups_x, f.groups_y);
  }
  // Tiny tiles and wide digits: the internal buffer, not the keys, bounds the count.
  const TuningConfig tiny{32, 1, 8};
  checkMaxCount(fakeSorter(fakes[0], &tiny).get(), fakes[0].max_allocation, fakes[0].groups_x, fakes[0].groups_y);
  // With plenty of everything, the limit is near 2^31 keys or above.
  CHECK(getSorterProperties(fakeSorter(fakes[0]).get()).max_count >= (1u << 30));
}

TEST_CASE_FIXTURE(GpuTest, "reliability: digit widths other than 4 and 8 are rounded to one of them" *
                               doctest::test_suite("host")) {
  for (uint32_t asked : {0u, 1u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 32u, 0xFFFFFFFFu}) {
    INFO("digit_bits " << asked);
    const TuningConfig tuning = withDigits(asked);
    SorterPtr sorter = fakeSorter({}, &tuning);
    const SorterProperties props = getSorterProperties(sorter.get());
    CHECK(props.tuning.digit_bits == (asked > 4 ? 8u : 4u));
    CHECK(props.tuning_u64.digit_bits == props.tuning.digit_bits);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: memory requirements near the largest count do not overflow" *
                               doctest::test_suite("host")) {
  for (uint32_t digit_bits : {4u, 8u}) {
    INFO(digit_bits << "-bit digits");
    const TuningConfig tuning = withDigits(digit_bits);
    SorterPtr sorter = fakeSorter({uint64_t{1} << 40, 0x7FFFFFFFu, 65535}, &tuning);
    const uint32_t max = getSorterProperties(sorter.get()).max_count;
    const uint32_t tile = getSorterProperties(sorter.get()).tile_size;
    REQUIRE(max >= (1u << 30));
    for (uint32_t n :
         {0u, 1u, tile - 1, tile, tile + 1, (1u << 30) - 1, 1u << 30, (1u << 30) + 1, max - tile - 1, max - 1, max})
      checkRequirements(sorter.get(), n);
    for (uint32_t n : {(1u << 31) - 1, 1u << 31, (1u << 31) + 1, 0xFFFFFFFFu - tile, 0xFFFFFFFFu})
      if (n <= max) checkRequirements(sorter.get(), n);
  }
  SorterPtr big = fakeSorter({uint64_t{1} << 40, 0x7FFFFFFFu, 65535});
  const uint32_t max = getSorterProperties(big.get()).max_count;
  const uint32_t tile = getSorterProperties(big.get()).tile_size;
  // 64-bit keys near the largest count need more than 2^33 bytes: 64-bit arithmetic.
  CHECK(getMemoryRequirements(big.get(), max, true, KeyType::kU64).keys_temp_size == uint64_t{max} * 8);

  // Validation's size checks are 64-bit too: at the largest count, one key short is refused and
  // an exact fit is accepted. The buffers are small; only their claimed sizes are checked, and
  // nothing is recorded.
  Context& ctx = context();
  Buffers buffers(ctx);
  for (KeyType type : {KeyType::kU32, KeyType::kU64}) {
    const uint64_t key_bytes = type == KeyType::kU64 ? 8 : 4;
    INFO((type == KeyType::kU64 ? "64-bit keys" : "32-bit keys"));
    const MemoryRequirements req = getMemoryRequirements(big.get(), max, true, type);
    SortInfo info;
    info.count = max;
    info.key_type = type;
    info.end_bit = type == KeyType::kU64 ? 64 : 32;
    info.keys = {buffers.make(64, req.usage), 0, uint64_t{max} * key_bytes};
    info.keys_temp = {buffers.make(64, req.usage), 0, req.keys_temp_size};
    info.values = {buffers.make(64, req.usage), 0, uint64_t{max} * 4};
    info.values_temp = {buffers.make(64, req.usage), 0, req.values_temp_size};
    info.internal = {buffers.make(64, req.internal_usage), 0, req.internal_size};
    CHECK(validateSortInfo(big.get(), info) == nullptr);
    SortInfo bad = info;
    bad.keys.size -= key_bytes;
    checkRefused(validateSortInfo(big.get(), bad), "keys buffer is smaller", "keys one key short at the largest count");
    bad = info;
    bad.values_temp.size -= 4;
    checkRefused(validateSortInfo(big.get(), bad), "values buffer is smaller", "values_temp one word short");
    bad = info;
    bad.internal.size -= 4;
    checkRefused(validateSortInfo(big.get(), bad), "internal buffer is smaller", "internal one word short");
    // Counts past the limit, up to 2^32 - 1, are refused before any size is computed.
    for (uint64_t n :
         {uint64_t{max} + 1, (uint64_t{1} << 31) + 1, uint64_t{0xFFFFFFFFu} - tile, uint64_t{0xFFFFFFFFu}}) {
      if (n <= max || n > 0xFFFFFFFFu) continue;
      bad = info;
      bad.count = static_cast<uint32_t>(n);
      checkRefused(validateSortInfo(big.get(), bad), "count", "a count past the largest");
    }
    // Two ranges in one (claimed) buffer of many GiB: adjacent is fine, one key of overlap is not.
    bad = info;
    bad.keys_temp = {info.keys.buffer, uint64_t{max} * key_bytes, uint64_t{max} * key_bytes};
    CHECK(validateSortInfo(big.get(), bad) == nullptr);
    bad.keys_temp.offset -= 16;
    checkRefused(validateSortInfo(big.get(), bad), "overlap", "temp overlapping keys at the largest count");
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: tile requirements at the largest screen do not overflow" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  TilePacker* raw = nullptr;
  std::string why;
  TilePackerCreateInfo info = ctx.createInfo<TilePackerCreateInfo>();
  info.tile_size = 8;
  info.alignment = 256;
  REQUIRE_MESSAGE(createTilePacker(info, &raw, &why) == VK_SUCCESS, why);
  struct Destroy {
    void operator()(TilePacker* p) const { destroyTilePacker(p); }
  };
  std::unique_ptr<TilePacker, Destroy> packer(raw);
  const uint32_t w = kMaxTileScreenSize, h = kMaxTileScreenSize;
  const TileMemoryRequirements req = getTileMemoryRequirements(packer.get(), w, h);
  const uint64_t tiles = uint64_t{(w + 7) / 8} * ((h + 7) / 8);
  CHECK(req.tiles_x == (w + 7) / 8);
  CHECK(req.tiles_y == (h + 7) / 8);
  CHECK(req.tile_ranges_size == tiles * 8);
  // Every 8 x 8 tile (64 pixels, or fewer at the edges) rounds up to 256 slots.
  CHECK(req.pixels_size == tiles * 256 * 4);
  CHECK(req.pixels_size >= (uint64_t{1} << 36));
  CHECK(req.containers_size == req.pixels_size);

  // Validation of the keys' size is 64-bit as well (4 * 65535^2 is just under 2^34).
  const VkDeviceSize key_bytes = uint64_t{w} * h * 4;
  Buffers buffers(ctx);
  TilePackInfo pack;
  pack.width = w;
  pack.height = h;
  pack.keys = {buffers.make(64, req.usage), 0, key_bytes};
  pack.counter = {buffers.make(64, req.usage), 0, 4};
  pack.pixels = {buffers.make(64, req.usage), 0, req.pixels_size};
  pack.tile_ranges = {buffers.make(64, req.usage), 0, req.tile_ranges_size};
  const char* message = validateTilePackInfo(packer.get(), pack);
  // 8192 x 8192 tiles may exceed the device's grid; otherwise the info is valid.
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physicalDevice(), &props);
  const bool grid_fits = req.tiles_x <= props.limits.maxComputeWorkGroupCount[0] &&
                         req.tiles_y <= props.limits.maxComputeWorkGroupCount[1];
  if (grid_fits) {
    CHECK(message == nullptr);
    pack.keys.size -= 4;
    checkRefused(validateTilePackInfo(packer.get(), pack), "keys buffer is smaller",
                 "keys one word short at the largest screen");
  } else {
    checkRefused(message, "tiles", "a grid larger than the device's");
  }
}

namespace {

struct Job {
  std::vector<uint32_t> input;
  bool pairs = false;
  SortOptions options;
  // Host-visible buffers; the words past `count` hold canaries.
  GpuBuffer keys, keys_temp, values, values_temp, internal;
  SortInfo info;
  SortResult result{};
};

constexpr uint32_t kCanaryWords = 16;

void prepare(Context& ctx, const Sorter* sorter, Job& job) {
  const uint32_t n = static_cast<uint32_t>(job.input.size());
  const MemoryRequirements req = getMemoryRequirements(sorter, n, job.pairs);
  const VkDeviceSize bytes = VkDeviceSize{n} * 4;
  std::string error;
  auto make = [&](GpuBuffer* b, VkDeviceSize size, uint32_t fill, VkBufferUsageFlags usage = 0) {
    REQUIRE_MESSAGE(ctx.createBuffer(size + kCanaryWords * 4, usage ? usage : req.usage, true, b, &error), error);
    auto* words = static_cast<uint32_t*>(b->mapped);
    std::fill(words, words + size / 4, fill);
    std::fill(words + size / 4, words + size / 4 + kCanaryWords, kCanary);
  };
  make(&job.keys, bytes, 0);
  std::memcpy(job.keys.mapped, job.input.data(), bytes);
  make(&job.keys_temp, bytes, kPoison);
  make(&job.internal, req.internal_size, kPoison, req.internal_usage);
  if (job.pairs) {
    make(&job.values, bytes, 0);
    auto* values = static_cast<uint32_t*>(job.values.mapped);
    std::iota(values, values + n, 0u);
    make(&job.values_temp, bytes, kPoison);
  }
  job.info.count = n;
  job.info.keys = {job.keys.buffer, 0, bytes};
  job.info.keys_temp = {job.keys_temp.buffer, 0, bytes};
  if (job.pairs) {
    job.info.values = {job.values.buffer, 0, bytes};
    job.info.values_temp = {job.values_temp.buffer, 0, bytes};
  }
  job.info.internal = {job.internal.buffer, 0, req.internal_size};
  job.info.begin_bit = job.options.begin_bit;
  job.info.end_bit = job.options.end_bit;
  job.info.descending = job.options.descending;
  REQUIRE(validateSortInfo(sorter, job.info) == nullptr);
}

uint32_t field(uint32_t key, const SortOptions& o) {
  const uint32_t bits = o.end_bit - o.begin_bit;
  return bits >= 32 ? key : (key >> o.begin_bit) & ((1u << bits) - 1);
}

// The stable order of `input` under `o`.
std::vector<uint32_t> stableOrder(const std::vector<uint32_t>& input, const SortOptions& o) {
  std::vector<uint32_t> order(input.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return o.descending ? field(input[a], o) > field(input[b], o) : field(input[a], o) < field(input[b], o);
  });
  return order;
}

// First mismatch against the stable CPU order, or an empty string.
std::string compare(const std::vector<uint32_t>& input, const uint32_t* keys, const uint32_t* values,
                    const SortOptions& o) {
  const std::vector<uint32_t> order = stableOrder(input, o);
  for (size_t i = 0; i < input.size(); ++i) {
    if (keys[i] != input[order[i]] || (values && values[i] != order[i]))
      return "mismatch at " + std::to_string(i) + " of " + std::to_string(input.size());
  }
  return {};
}

bool canariesIntact(const GpuBuffer& b, VkDeviceSize used) {
  const auto* words = static_cast<const uint32_t*>(b.mapped) + used / 4;
  return std::all_of(words, words + kCanaryWords, [](uint32_t w) { return w == kCanary; });
}

uint32_t computeQueueFamily(VkPhysicalDevice physical) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
  for (uint32_t i = 0; i < n; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  return UINT32_MAX;
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "reliability: one sorter recorded on three threads, submitted together") {
  Context& ctx = context();
  const Sorter* sorter = ctx.sorter();
  const VkDevice device = ctx.vkDevice();
  const uint32_t tile = getSorterProperties(sorter).tile_size;
  const uint32_t family = computeQueueFamily(ctx.physicalDevice());
  REQUIRE(family != UINT32_MAX);
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);

  // Different sizes, key-only and pairs, an odd pass count (result in the temps), descending.
  Job jobs[3];
  jobs[0].input = makeKeys(5 * tile + 3, Distribution::kUniform, rng());
  jobs[1].input = makeKeys(3 * tile + 7, Distribution::kLowBits, rng());
  jobs[1].pairs = true;
  jobs[1].options.end_bit = 12;
  jobs[2].input = makeKeys(tile / 2 + 1, Distribution::kAndOfTwo, rng());
  jobs[2].pairs = true;
  jobs[2].options.descending = true;
  for (Job& job : jobs) prepare(ctx, sorter, job);

  // Command pools are externally synchronised: one per recording thread.
  VkCommandPool pools[3] = {};
  VkCommandBuffer cmds[3] = {};
  for (int i = 0; i < 3; ++i) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = family;
    REQUIRE(vkCreateCommandPool(device, &pool_info, nullptr, &pools[i]) == VK_SUCCESS);
    VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cmd_info.commandPool = pools[i];
    cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cmd_info.commandBufferCount = 1;
    REQUIRE(vkAllocateCommandBuffers(device, &cmd_info, &cmds[i]) == VK_SUCCESS);
  }
  std::atomic<int> recorded{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      if (vkBeginCommandBuffer(cmds[i], &begin) != VK_SUCCESS) return;
      jobs[i].result = cmdSort(sorter, cmds[i], jobs[i].info);
      VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(cmds[i], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                           nullptr, 0, nullptr);
      if (vkEndCommandBuffer(cmds[i]) == VK_SUCCESS) ++recorded;
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(recorded == 3);

  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  REQUIRE(vkCreateFence(device, &fence_info, nullptr, &fence) == VK_SUCCESS);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 3;
  submit.pCommandBuffers = cmds;
  CHECK(vkQueueSubmit(queue, 1, &submit, fence) == VK_SUCCESS);
  CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS);
  vkDestroyFence(device, fence, nullptr);
  for (VkCommandPool pool : pools) vkDestroyCommandPool(device, pool, nullptr);

  for (Job& job : jobs) {
    INFO("count " << job.input.size() << (job.pairs ? ", pairs" : ", keys"));
    const bool in_temp = job.result.in_temp;
    CHECK(in_temp == (job.result.passes % 2 == 1));
    const GpuBuffer& keys = in_temp ? job.keys_temp : job.keys;
    const GpuBuffer& values = in_temp ? job.values_temp : job.values;
    CHECK(job.result.keys.buffer == keys.buffer);
    const std::string mismatch =
        compare(job.input, static_cast<const uint32_t*>(keys.mapped),
                job.pairs ? static_cast<const uint32_t*>(values.mapped) : nullptr, job.options);
    CHECK_MESSAGE(mismatch.empty(), mismatch);
    const VkDeviceSize bytes = VkDeviceSize{job.input.size()} * 4;
    CHECK(canariesIntact(job.keys, bytes));
    CHECK(canariesIntact(job.keys_temp, bytes));
    CHECK(canariesIntact(job.internal, job.info.internal.size));
    if (job.pairs) {
      CHECK(canariesIntact(job.values, bytes));
      CHECK(canariesIntact(job.values_temp, bytes));
    }
    for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.values, &job.values_temp, &job.internal})
      if (b->buffer) ctx.destroyBuffer(b);
  }
}

namespace {

// Prepares `job`'s buffers, records the sort with `sorter` (made on ctx's device) and a barrier
// to the host, submits and waits.
void runJob(Context& ctx, const Sorter* sorter, Job& job) {
  prepare(ctx, sorter, job);
  std::string error;
  REQUIRE_MESSAGE(ctx.submit(
                      [&](VkCommandBuffer cmd) {
                        job.result = cmdSort(sorter, cmd, job.info);
                        VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
                        to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
                        to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
                        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                                             1, &to_host, 0, nullptr, 0, nullptr);
                      },
                      &error),
                  error);
}

// Sorts `input` with `sorter` (made on ctx's device), in host-visible buffers with poisoned
// scratch and canaries, and checks the result against the stable CPU order.
void checkSortWith(Context& ctx, const Sorter* sorter, const std::vector<uint32_t>& input, bool pairs,
                   const SortOptions& options = {}) {
  INFO("count " << input.size() << std::string(pairs ? ", pairs" : ", keys"));
  Job job;
  job.input = input;
  job.pairs = pairs;
  job.options = options;
  runJob(ctx, sorter, job);
  const GpuBuffer& keys = job.result.in_temp ? job.keys_temp : job.keys;
  const GpuBuffer& values = job.result.in_temp ? job.values_temp : job.values;
  const std::string mismatch = compare(job.input, static_cast<const uint32_t*>(keys.mapped),
                                       pairs ? static_cast<const uint32_t*>(values.mapped) : nullptr, job.options);
  CHECK_MESSAGE(mismatch.empty(), mismatch);
  const VkDeviceSize bytes = VkDeviceSize{job.input.size()} * 4;
  CHECK(canariesIntact(job.keys, bytes));
  CHECK(canariesIntact(job.keys_temp, bytes));
  CHECK(canariesIntact(job.internal, job.info.internal.size));
  if (pairs) {
    CHECK(canariesIntact(job.values, bytes));
    CHECK(canariesIntact(job.values_temp, bytes));
  }
  for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.values, &job.values_temp, &job.internal})
    if (b->buffer) ctx.destroyBuffer(b);
}

}  // namespace

namespace {

// Barriers a sorter made with countingGetDeviceProcAddr records.
uint32_t g_barriers = 0;
VKAPI_ATTR void VKAPI_CALL countingCmdPipelineBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src,
                                                      VkPipelineStageFlags dst, VkDependencyFlags flags,
                                                      uint32_t memory_count, const VkMemoryBarrier* memory,
                                                      uint32_t buffer_count, const VkBufferMemoryBarrier* buffers,
                                                      uint32_t image_count, const VkImageMemoryBarrier* images) {
  ++g_barriers;
  vkCmdPipelineBarrier(cmd, src, dst, flags, memory_count, memory, buffer_count, buffers, image_count, images);
}
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL countingGetDeviceProcAddr(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkCmdPipelineBarrier") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(countingCmdPipelineBarrier);
  return vkGetDeviceProcAddr(device, name);
}

// The job's input back in its buffers, scratch poisoned again.
void restore(Job& job) {
  const size_t n = job.input.size();
  std::memcpy(job.keys.mapped, job.input.data(), n * 4);
  std::fill_n(static_cast<uint32_t*>(job.keys_temp.mapped), n, kPoison);
  if (job.pairs) {
    std::iota(static_cast<uint32_t*>(job.values.mapped), static_cast<uint32_t*>(job.values.mapped) + n, 0u);
    std::fill_n(static_cast<uint32_t*>(job.values_temp.mapped), n, kPoison);
  }
}

std::string checkJob(const Job& job) {
  const GpuBuffer& keys = job.result.in_temp ? job.keys_temp : job.keys;
  const GpuBuffer& values = job.result.in_temp ? job.values_temp : job.values;
  return compare(job.input, static_cast<const uint32_t*>(keys.mapped),
                 job.pairs ? static_cast<const uint32_t*>(values.mapped) : nullptr, job.options);
}

void toHost(VkCommandBuffer cmd) {
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                       nullptr, 0, nullptr);
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "batches: independent sorts behind shared barriers, each as cmdSort sorts it" *
                               doctest::test_suite("subgroup")) {
  // Every path in one batch: one dispatch, the look-back (keys, pairs, argsort, a bit range of
  // two 8-bit passes) and the 4-bit passes past its limit, one with a GPU-side count, besides an
  // empty sort. Each sort runs alone first (its barriers counted), then all of them from the
  // same inputs in one cmdSortBatch: the same results, and no more barriers than the largest.
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.lookback_max_count = 6000;
  SorterCreateInfo info = context().createInfo<SorterCreateInfo>();
  info.get_device_proc_addr = countingGetDeviceProcAddr;
  info.tuning = &tuning;
  Sorter* raw = nullptr;
  std::string error;
  REQUIRE_MESSAGE(createSorter(info, &raw, &error) == VK_SUCCESS, error);
  SorterPtr sorter(raw);
  Context& ctx = context();
  std::vector<Job> jobs(6);
  auto setUp = [&](Job& job, uint32_t n, Distribution d, bool pairs) {
    job.input = makeKeys(n, d, rng());
    job.pairs = pairs;
  };
  setUp(jobs[0], 700, Distribution::kUniform, false);   // one dispatch
  setUp(jobs[1], 5000, Distribution::kLowBits, true);  // look-back, descending
  jobs[1].options.descending = true;
  setUp(jobs[2], 9000, Distribution::kUniform, false);  // 4-bit passes
  setUp(jobs[3], 3000, Distribution::kUniform, true);   // look-back, bits [4, 20)
  jobs[3].options.begin_bit = 4;
  jobs[3].options.end_bit = 20;
  setUp(jobs[4], 4000, Distribution::kLowBits, true);   // look-back argsort
  setUp(jobs[5], 7000, Distribution::kAndOfTwo, true);  // 4-bit passes, the count on the GPU
  GpuBuffer count_buffer;
  REQUIRE_MESSAGE(ctx.createBuffer(16, getMemoryRequirements(sorter.get(), 1, false).usage, true, &count_buffer, &error),
                  error);
  const uint32_t gpu_count = 6500;
  *static_cast<uint32_t*>(count_buffer.mapped) = gpu_count;
  for (Job& job : jobs) prepare(ctx, sorter.get(), job);
  jobs[4].info.argsort = true;
  std::vector<BatchSort> batch;
  for (Job& job : jobs) batch.push_back({job.info, {}});
  batch[5].count_buffer = {count_buffer.buffer, 0, 4};
  BatchSort empty = batch[0];
  empty.info.count = 0;
  // Job i's buffers checked for `result`; the GPU-side count sorts its first gpu_count keys.
  auto check = [&](size_t i, const SortResult& result) {
    Job reference = jobs[i];
    if (i == 5) reference.input.resize(gpu_count);
    reference.result = result;
    const std::string mismatch = checkJob(reference);
    CHECK_MESSAGE(mismatch.empty(), mismatch);
  };

  uint32_t most_alone = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    INFO("sort " << i << " alone");
    g_barriers = 0;
    REQUIRE_MESSAGE(ctx.submit(
                        [&](VkCommandBuffer cmd) {
                          jobs[i].result = batch[i].count_buffer.buffer
                                               ? cmdSortIndirect(sorter.get(), cmd, batch[i].info, batch[i].count_buffer)
                                               : cmdSort(sorter.get(), cmd, batch[i].info);
                          toHost(cmd);
                        },
                        &error),
                    error);
    most_alone = std::max(most_alone, g_barriers);
    check(i, jobs[i].result);
    restore(jobs[i]);
  }
  REQUIRE(most_alone >= 2 * 8);  // the 4-bit passes: two barriers a pass at least

  batch.push_back(empty);
  REQUIRE(validateSortBatch(sorter.get(), batch) == nullptr);
  std::vector<SortResult> results(batch.size());
  g_barriers = 0;
  REQUIRE_MESSAGE(ctx.submit(
                      [&](VkCommandBuffer cmd) {
                        cmdSortBatch(sorter.get(), cmd, batch, results.data());
                        toHost(cmd);
                      },
                      &error),
                  error);
  CHECK(g_barriers == most_alone);
  CHECK(results.back().passes == 0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    INFO("sort " << i << " in the batch");
    CHECK(results[i].passes == jobs[i].result.passes);
    CHECK(results[i].in_temp == jobs[i].result.in_temp);
    check(i, results[i]);
    const VkDeviceSize bytes = VkDeviceSize{jobs[i].input.size()} * 4;
    CHECK(canariesIntact(jobs[i].keys, bytes));
    CHECK(canariesIntact(jobs[i].keys_temp, bytes));
    CHECK(canariesIntact(jobs[i].internal, jobs[i].info.internal.size));
  }

  // Refused: two sorts sharing a buffer (named by index), and timestamps.
  uint32_t bad = 0;
  std::vector<BatchSort> shared = {batch[1], batch[3]};
  shared[1].info.internal = shared[0].info.internal;
  const char* why = validateSortBatch(sorter.get(), shared, &bad);
  REQUIRE(why != nullptr);
  CHECK(std::string(why).find("overlap") != std::string::npos);
  CHECK(bad == 1);
  shared = {batch[0], batch[2]};
  shared[1].info.keys_temp = shared[0].info.keys;
  CHECK(validateSortBatch(sorter.get(), shared, &bad) != nullptr);
  shared = {batch[0]};
  VkQueryPool pool = reinterpret_cast<VkQueryPool>(uintptr_t{1});
  shared[0].info.timestamp_pool = pool;
  why = validateSortBatch(sorter.get(), shared, &bad);
  REQUIRE(why != nullptr);
  CHECK(std::string(why).find("timestamps") != std::string::npos);
  CHECK(bad == 0);
  for (Job& job : jobs)
    for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.values, &job.values_temp, &job.internal})
      if (b->buffer) ctx.destroyBuffer(b);
  ctx.destroyBuffer(&count_buffer);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: the tuning rows of another vendor sort correctly here") {
  // NVIDIA's row (and its wider key/value scatter) on this device: the shapes must keep one tile
  // size, and the sort must stay exact.
  SorterPtr sorter = fakeSorter({0, 0, 0, 0x10DE}, nullptr, Pipelines::kCompiled);
  const SorterProperties props = getSorterProperties(sorter.get());
  INFO("tuning " << props.tuning.workgroup_size << "x" << props.tuning.keys_per_thread << ", pairs scatter "
                 << props.pairs_scatter.workgroup_size << "x" << props.pairs_scatter.keys_per_thread);
  CHECK(props.pairs_scatter.workgroup_size * props.pairs_scatter.keys_per_thread == props.tile_size);
  for (const bool pairs : {true, false})
    checkSortWith(context(), sorter.get(), makeKeys(3 * props.tile_size + 5, Distribution::kAndOfTwo, rng()), pairs);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: 2D grids and a scan of several chunks, on a device of small limits" *
                               doctest::test_suite("subgroup")) {
  // A device that allows 300 workgroups in x and 64 invocations per workgroup, so that a few
  // thousand 64-key tiles need 2D grids (every dispatch linearises its group ID) and the scan of
  // the per-group digit counts runs several chunks of 64 threads x 4 sums. Then the look-back,
  // whose up to 1024 tiles also need a 2D grid here.
  const FakeLimits small_device{0, 300, 0, 0, 64};
  for (uint32_t digit_bits : {4u, 8u}) {
    TuningConfig tuning{32, 2, digit_bits};
    tuning.lookback_max_count = 0;
    SorterPtr sorter = fakeSorter(small_device, &tuning, Pipelines::kCompiled);
    const uint32_t tile = getSorterProperties(sorter.get()).tile_size;
    INFO(digit_bits << "-bit passes, tile " << tile);
    const uint32_t n = (4 * 1024 + 5) * tile - 7;
    checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kUniform, rng()), false);
    checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kAndOfTwo, rng()), true);
  }
  TuningConfig tuning{32, 2, 4};
  tuning.lookback_keys_per_thread = 2;
  tuning.lookback_workgroup_size = 32;
  SorterPtr sorter = fakeSorter(small_device, &tuning, Pipelines::kCompiled);
  const uint32_t tile = getSorterProperties(sorter.get()).lookback_tile_size;
  INFO("look-back, tile " << tile);
  const uint32_t n = 1000 * tile - 7;
  SortInfo asked;
  asked.count = n;
  REQUIRE(getPassCount(sorter.get(), asked) == 4);  // the look-back's 8-bit digits
  checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kUniform, rng()), false);
  checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kLowBits, rng()), true);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: every look-back tile publishes its prefix with the prefix flag" *
                               doctest::test_suite("subgroup")) {
  // A word published without its flag would only make later tiles slow (they count the tile
  // from its keys instead), so the sort's result cannot show it: the words are an internal
  // layout, checked here. After the sort, the last pass's set holds, for every tile and bin,
  // FLAG_PREFIX | the count of that bin's keys in this tile and every earlier one, in the order
  // the last pass read them (the input stably sorted by the lower digits).
  TuningConfig tuning{32, 2, 4};
  tuning.lookback_keys_per_thread = 2;
  tuning.lookback_workgroup_size = 32;
  tuning.block_max_count = 0;
  SorterPtr sorter = fakeSorter({}, &tuning, Pipelines::kCompiled);
  const uint32_t tile = getSorterProperties(sorter.get()).lookback_tile_size;
  const uint32_t tiles = 20, n = tiles * tile - 5;
  Job job;
  job.input = makeKeys(n, Distribution::kUniform, rng());
  runJob(context(), sorter.get(), job);
  REQUIRE(job.result.passes == 4);  // 8-bit digits: the look-back
  std::vector<uint32_t> order = job.input;
  std::stable_sort(order.begin(), order.end(), [](uint32_t a, uint32_t b) { return (a & 0xFFFFFF) < (b & 0xFFFFFF); });
  constexpr uint32_t kFlagPrefix = 1u << 31, kLastSet = 3 & 1;
  const auto* words = static_cast<const uint32_t*>(job.internal.mapped);
  std::vector<uint32_t> prefix(256, 0);
  size_t bad = 0, checked = 0;
  for (uint32_t t = 0; t < tiles; ++t) {
    for (uint32_t i = t * tile; i < std::min(n, (t + 1) * tile); ++i) ++prefix[order[i] >> 24];
    for (uint32_t bin = 0; bin < 256; ++bin, ++checked)
      if (words[VREN_RADIX_LOOKBACK_WORDS + (2 * t + kLastSet) * 256 + bin] != (kFlagPrefix | prefix[bin])) ++bad;
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << checked << " published words are not the flagged inclusive prefix");
  for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.internal})
    if (b->buffer) context().destroyBuffer(b);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: several contexts sort on several threads at once") {
  // Contexts are made and destroyed one at a time (creation loads volk's global entry points);
  // in between, each thread sorts with its own context.
  constexpr int kThreads = 3;
  std::mutex message_mutex;
  std::vector<std::string> messages;
  ContextOptions options;
  options.validation = true;
  options.on_message = [&](const std::string& m) {
    std::lock_guard<std::mutex> lock(message_mutex);
    messages.push_back(m);
  };
  std::vector<std::unique_ptr<Context>> contexts;
  for (int i = 0; i < kThreads; ++i) {
    std::string error;
    contexts.push_back(Context::create(options, &error));
    REQUIRE_MESSAGE(contexts.back() != nullptr, error);
  }
  const uint32_t tile = getSorterProperties(contexts[0]->sorter()).tile_size;
  // Inputs made up front: the shared generator is not thread-safe.
  std::vector<std::vector<uint32_t>> inputs[kThreads];
  for (int t = 0; t < kThreads; ++t)
    for (int round = 0; round < 4; ++round)
      inputs[t].push_back(
          makeKeys((t + 1) * tile * (round + 1) + 17 * round + t, kAllDistributions[(t + round) % 7], rng()));

  std::string failures[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t round = 0; round < inputs[t].size() && failures[t].empty(); ++round) {
        const std::vector<uint32_t>& input = inputs[t][round];
        const bool pairs = (t + round) % 2 == 0;
        SortOptions o;
        o.descending = round == 3;
        std::vector<uint32_t> keys = input, values;
        if (pairs) {
          values.resize(input.size());
          std::iota(values.begin(), values.end(), 0u);
        }
        SortStats stats;
        std::string error;
        if (!contexts[t]->sort(keys, values, o, &stats, &error)) {
          failures[t] = "sort failed: " + error;
        } else if (!stats.canaries_intact) {
          failures[t] = "canaries overwritten";
        } else {
          failures[t] = compare(input, keys.data(), pairs ? values.data() : nullptr, o);
        }
        if (!failures[t].empty())
          failures[t] = "thread " + std::to_string(t) + ", round " + std::to_string(round) + ": " + failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  contexts.clear();
  for (const std::string& f : failures) CHECK_MESSAGE(f.empty(), f);
  for (const std::string& m : messages) FAIL_CHECK("validation: " << m);
}

}  // namespace vren::radix::test
