// The material sort against a CPU reference: counts, offsets, dispatch arguments and the
// new-to-old map exactly (stable order), with poisoned outputs and guard words, under the
// validation layer; indirect dispatches over the result; the `materials` CLI command's inputs.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <volk.h>

#include "gpu_test.h"
#include "materials_command.h"
#include "spirv/materials_test_visit.h"
#include "vren_radix/materials.h"

namespace vren::radix::test {
namespace {

constexpr uint32_t kPoison = 0xDCDCDCDCu;
constexpr uint32_t kCanary = 0xC0FFEE11u;
constexpr VkDeviceSize kFrontGuard = 16;  // also makes every range start at a non-zero offset
constexpr VkDeviceSize kBackGuard = 64;

using SorterPtr = std::unique_ptr<MaterialSorter, void (*)(MaterialSorter*)>;

MaterialSorter* createdSorter(const MaterialTuning* tuning) {
  // The context first: statics die in reverse order, so the sorters go before their device.
  Context& ctx = context();
  static std::map<std::tuple<uint32_t, uint32_t, uint32_t>, SorterPtr> sorters;
  const auto key = tuning ? std::make_tuple(tuning->workgroup_size, tuning->min_rounds, tuning->poll_budget)
                          : std::make_tuple(0u, 0u, 0u);
  auto it = sorters.find(key);
  if (it != sorters.end()) return it->second.get();
  MaterialSorterCreateInfo info = ctx.createInfo<MaterialSorterCreateInfo>();
  info.tuning = tuning;
  MaterialSorter* raw = nullptr;
  std::string why;
  const VkResult result = createMaterialSorter(info, &raw, &why);
  if (result != VK_SUCCESS) {
    std::fprintf(stderr, "Cannot create a material sorter: %s\n", why.c_str());
    std::exit(1);
  }
  if (!tuning) {
    const auto p = getMaterialSorterProperties(raw);
    std::printf("material sorter: %u threads, >= %u rounds per chunk, subgroup size %u, up to %u materials\n",
                p.tuning.workgroup_size, p.tuning.min_rounds, p.subgroup_size, p.max_material_count);
  }
  return sorters.emplace(key, SorterPtr(raw, destroyMaterialSorter)).first->second.get();
}

// The sorter for `tuning` (null: the library's default).
MaterialSorter* materialSorter(const MaterialTuning* tuning = nullptr) {
  return createdSorter(tuning);
}

struct Reference {
  std::vector<uint32_t> counts, offsets, dispatch, new_to_old;
};

Reference reference(const std::vector<uint32_t>& ids, uint32_t materials, const MaterialSortOptions& o,
                    uint32_t max_groups_x) {
  Reference r;
  r.counts.assign(materials, 0);
  for (uint32_t id : ids) ++r.counts[std::min(id, materials - 1)];
  uint32_t slots = 0;
  for (uint32_t m = 0; m < materials; ++m) {
    r.offsets.push_back(slots);
    slots += (r.counts[m] + o.range_alignment - 1) / o.range_alignment * o.range_alignment;
    const uint32_t groups = (r.counts[m] + o.shading_workgroup_size - 1) / o.shading_workgroup_size;
    uint32_t x = groups, y = 1;
    if (m == o.void_material) {
      x = 0;
    } else if (groups > max_groups_x) {
      y = (groups + max_groups_x - 1) / max_groups_x;
      x = (groups + y - 1) / y;
    }
    r.dispatch.insert(r.dispatch.end(), {x, y, 1});
  }
  r.new_to_old.assign(slots, kPaddingSlot);
  std::vector<uint32_t> next = r.offsets;
  for (uint32_t p = 0; p < ids.size(); ++p) r.new_to_old[next[std::min(ids[p], materials - 1)]++] = p;
  return r;
}

// A host-visible buffer whose range sits between guard words; everything starts as poison.
struct Guarded {
  GpuBuffer buffer;
  VkDeviceSize bytes = 0;

  Guarded(VkDeviceSize size, VkBufferUsageFlags usage) : bytes(size) {
    std::string error;
    REQUIRE_MESSAGE(context().createBuffer(kFrontGuard + bytes + kBackGuard, usage, true, &buffer, &error), error);
    std::fill_n(words(), (kFrontGuard + bytes + kBackGuard) / 4, kPoison);
    std::fill_n(words(), kFrontGuard / 4, kCanary);
    std::fill_n(data() + bytes / 4, kBackGuard / 4, kCanary);
  }
  ~Guarded() { context().destroyBuffer(&buffer); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  uint32_t* words() { return static_cast<uint32_t*>(buffer.mapped); }
  uint32_t* data() { return words() + kFrontGuard / 4; }
  BufferRange range() const { return {buffer.buffer, kFrontGuard, bytes}; }
  bool guardsIntact() {
    const uint32_t* back = data() + bytes / 4;
    return std::all_of(words(), words() + kFrontGuard / 4, [](uint32_t w) { return w == kCanary; }) &&
           std::all_of(back, back + kBackGuard / 4, [](uint32_t w) { return w == kCanary; });
  }
};

void hostBarrier(VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0, nullptr, 0,
                       nullptr);
}

// The buffers of one sort, sized by getMaterialSortRequirements and poisoned.
struct SortBuffers {
  MaterialSortRequirements req;
  Guarded ids, chunk_counts, counts, offsets, dispatch, new_to_old;

  SortBuffers(const MaterialSorter* sorter, const std::vector<uint32_t>& input, uint32_t materials,
              const MaterialSortOptions& o)
      : req(getMaterialSortRequirements(sorter, static_cast<uint32_t>(input.size()), materials, o)),
        ids(std::max<VkDeviceSize>(4, input.size() * 4), req.usage),
        chunk_counts(req.chunk_counts_size, req.usage),
        counts(req.counts_size, req.usage),
        offsets(req.offsets_size, req.usage),
        dispatch(req.dispatch_size, req.dispatch_usage),
        new_to_old(req.new_to_old_size, req.usage) {
    std::copy(input.begin(), input.end(), ids.data());
  }

  MaterialSortInfo info(uint32_t pixels, uint32_t materials, const MaterialSortOptions& o) const {
    MaterialSortInfo si;
    si.pixel_count = pixels;
    si.material_count = materials;
    si.options = o;
    si.material_ids = ids.range();
    si.chunk_counts = chunk_counts.range();
    si.counts = counts.range();
    si.offsets = offsets.range();
    si.dispatch = dispatch.range();
    si.new_to_old = new_to_old.range();
    return si;
  }
};

template <typename T>
size_t firstMismatch(const T* got, const std::vector<T>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) return i;
  return want.size();
}

// The fast path's scan publishes, whatever the scatter read, every chunk's prefix and every
// total with the flag that tells them from cleared words (an internal layout, checked here
// because a word published without its flag would only make the scatter slow: it would add
// its prefixes up itself): after the chunks' counts, [material][chunk] prefixes, then totals.
void checkPublished(SortBuffers& b, const std::vector<uint32_t>& ids, uint32_t materials) {
  constexpr uint32_t kPublished = 1u << 31;
  const uint32_t chunks = b.req.chunk_count;
  std::vector<uint32_t> want(size_t{materials} * chunks + materials, 0);  // counts, then exclusive sums
  for (uint32_t p = 0; p < ids.size(); ++p) ++want[size_t{std::min(ids[p], materials - 1)} * chunks + p / b.req.chunk_size];
  for (uint32_t m = 0; m < materials; ++m) {
    uint32_t sum = 0;
    for (uint32_t c = 0; c < chunks; ++c) sum += std::exchange(want[size_t{m} * chunks + c], sum);
    want[size_t{materials} * chunks + m] = sum;
  }
  const uint32_t* published = b.chunk_counts.data() + size_t{materials} * chunks;
  size_t bad = 0;
  while (bad < want.size() && published[bad] == (kPublished | want[bad])) ++bad;
  CHECK_MESSAGE(bad == want.size(), "published word " << bad << " = " << published[bad] << ", expected "
                                                      << (bad < want.size() ? kPublished | want[bad] : 0));
}

// Sorts on the GPU and compares every output with the CPU reference.
void checkSort(const std::vector<uint32_t>& ids, uint32_t materials, const MaterialSortOptions& o,
               const std::string& label, const MaterialSorter* sorter = nullptr) {
  if (!sorter) sorter = materialSorter();
  INFO(label << ": " << ids.size() << " pixels, " << materials << " materials, alignment " << o.range_alignment
             << ", void " << static_cast<int32_t>(o.void_material) << ", shading workgroup " << o.shading_workgroup_size);
  const auto props = getMaterialSorterProperties(sorter);
  const Reference want = reference(ids, materials, o, props.max_workgroup_count_x);
  SortBuffers b(sorter, ids, materials, o);
  const MaterialSortInfo si = b.info(static_cast<uint32_t>(ids.size()), materials, o);
  const char* invalid = validateMaterialSortInfo(sorter, si);
  REQUIRE_MESSAGE(invalid == nullptr, invalid);
  std::string error;
  REQUIRE_MESSAGE(context().submit(
                      [&](VkCommandBuffer cmd) {
                        cmdSortMaterials(sorter, cmd, si);
                        hostBarrier(cmd);
                      },
                      &error),
                  error);

  size_t bad = firstMismatch(b.counts.data(), want.counts);
  CHECK_MESSAGE(bad == want.counts.size(), "counts[" << bad << "] = " << b.counts.data()[bad] << ", expected "
                                                     << (bad < want.counts.size() ? want.counts[bad] : 0));
  bad = firstMismatch(b.offsets.data(), want.offsets);
  CHECK_MESSAGE(bad == want.offsets.size(), "offsets[" << bad << "] = " << b.offsets.data()[bad] << ", expected "
                                                       << (bad < want.offsets.size() ? want.offsets[bad] : 0));
  bad = firstMismatch(b.dispatch.data(), want.dispatch);
  CHECK_MESSAGE(bad == want.dispatch.size(), "dispatch word " << bad << " = " << b.dispatch.data()[bad]
                                                              << ", expected "
                                                              << (bad < want.dispatch.size() ? want.dispatch[bad] : 0));
  bad = firstMismatch(b.new_to_old.data(), want.new_to_old);
  CHECK_MESSAGE(bad == want.new_to_old.size(),
                "new_to_old[" << bad << "] = " << b.new_to_old.data()[bad] << ", expected "
                              << (bad < want.new_to_old.size() ? want.new_to_old[bad] : 0));
  // Slots past the last range are not the sort's to write.
  uint32_t* tail = b.new_to_old.data() + want.new_to_old.size();
  CHECK(std::all_of(tail, b.new_to_old.data() + b.req.new_to_old_size / 4, [](uint32_t w) { return w == kPoison; }));
  CHECK(want.new_to_old.size() <= b.req.max_slot_count);
  CHECK(std::equal(ids.begin(), ids.end(), b.ids.data()));
  if (materials <= props.fast_material_count) checkPublished(b, ids, materials);
  for (Guarded* g : {&b.ids, &b.chunk_counts, &b.counts, &b.offsets, &b.dispatch, &b.new_to_old})
    CHECK_MESSAGE(g->guardsIntact(), "a guard word around a buffer range was overwritten");
}

std::vector<uint32_t> randomIds(size_t count, uint32_t materials) {
  std::uniform_int_distribution<uint32_t> id(0, materials - 1);
  std::vector<uint32_t> ids(count);
  for (auto& v : ids) v = id(rng());
  return ids;
}

// Rectangular blocks of one material, as a renderer's ID buffer has, with a few stray pixels.
std::vector<uint32_t> blockIds(uint32_t width, uint32_t height, uint32_t materials) {
  std::vector<uint32_t> ids(size_t{width} * height);
  const uint32_t salt = rng()();
  std::uniform_int_distribution<uint32_t> id(0, materials - 1);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const uint32_t block = (x / 13) * 7919u + (y / 9) * 104729u + salt;
      ids[size_t{y} * width + x] = (rng()() % 50 == 0) ? id(rng()) : (block * 2654435761u >> 7) % materials;
    }
  return ids;
}

uint32_t chunkSize(uint32_t materials, const MaterialSorter* sorter = nullptr) {
  return getMaterialSortRequirements(sorter ? sorter : materialSorter(), 1, materials, {}).chunk_size;
}

MaterialSortOptions aligned(uint32_t alignment) {
  MaterialSortOptions o;
  o.range_alignment = alignment;
  return o;
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "materials: random maps around the chunk size, 1 to 4096 materials") {
  for (uint32_t materials : {1u, 8u, 256u, 4096u}) {
    const uint32_t c = chunkSize(materials);
    for (uint32_t n : {c - 1, c, c + 1, 3 * c + 17}) {
      for (uint32_t alignment : {1u, 32u}) checkSort(randomIds(n, materials), materials, aligned(alignment), "random");
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "materials: random sizes and block maps") {
  std::uniform_int_distribution<uint32_t> size(1, 60000);
  for (uint32_t materials : {3u, 8u, 64u, 256u, 4096u}) {
    checkSort(randomIds(size(rng()), materials), materials, aligned(materials % 2 ? 1 : 32), "random size");
    checkSort(blockIds(257, 131, materials), materials, aligned(32), "blocks");
  }
}

TEST_CASE_FIXTURE(GpuTest, "materials: the largest material count") {
  const uint32_t materials = getMaterialSorterProperties(materialSorter()).max_material_count;
  REQUIRE(materials >= 4096);
  checkSort(randomIds(2 * chunkSize(materials) + 5, materials), materials, aligned(32), "random");
}

TEST_CASE_FIXTURE(GpuTest, "materials: no pixels, one pixel, two pixels") {
  for (uint32_t n : {0u, 1u, 2u}) {
    for (uint32_t alignment : {1u, 32u}) {
      checkSort(randomIds(n, 8), 8, aligned(alignment), "tiny");
      checkSort(randomIds(n, 1), 1, aligned(alignment), "tiny");
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "materials: a single material in use") {
  const uint32_t n = 3 * chunkSize(8) + 100;
  for (uint32_t alignment : {1u, 32u}) {
    checkSort(std::vector<uint32_t>(n, 5), 8, aligned(alignment), "all 5");
    checkSort(std::vector<uint32_t>(n, 0), 8, aligned(alignment), "all 0");
    checkSort(std::vector<uint32_t>(n, 7), 8, aligned(alignment), "all the last material");
    checkSort(std::vector<uint32_t>(n, 0), 1, aligned(alignment), "one material");
  }
}

TEST_CASE_FIXTURE(GpuTest, "materials: empty materials") {
  // Only materials 2, 3 and 250 of 256 occur: the first, the last and most others are empty.
  std::vector<uint32_t> ids = randomIds(5000, 3);
  for (auto& id : ids) id = id == 0 ? 2 : id == 1 ? 3 : 250;
  for (uint32_t alignment : {1u, 32u}) checkSort(ids, 256, aligned(alignment), "sparse");
  std::vector<uint32_t> ids2 = randomIds(777, 2);
  for (auto& id : ids2) id = id * 4095;  // 0 and 4095 of 4096
  checkSort(ids2, 4096, aligned(32), "two ends");
}

TEST_CASE_FIXTURE(GpuTest, "materials: sky and void materials") {
  // Materials 0..5 shade surfaces, 6 is the sky, 7 the void: its dispatch is empty.
  std::vector<uint32_t> ids = blockIds(199, 97, 8);
  MaterialSortOptions o = aligned(32);
  o.void_material = 7;
  checkSort(ids, 8, o, "void 7");
  o.void_material = 0;
  o.range_alignment = 1;
  checkSort(ids, 8, o, "void 0");
  for (auto& id : ids) id = 7;
  o.void_material = 7;
  checkSort(ids, 8, o, "all void");
}

// The 2D-grid cases need more pixels than the device's maxComputeWorkGroupCount[0].
constexpr uint32_t kLargestGridTest = 1u << 22;

TEST_CASE_FIXTURE(GpuTest, "materials: shading workgroup sizes, and a 2D dispatch grid") {
  const uint32_t max_x = getMaterialSorterProperties(materialSorter()).max_workgroup_count_x;
  for (uint32_t size : {1u, 7u, 32u, 64u, 256u}) {
    MaterialSortOptions o;
    o.shading_workgroup_size = size;
    checkSort(randomIds(10000, 16), 16, o, "random");
  }
  // More single-invocation groups than maxComputeWorkGroupCount[0], where that is a size a test
  // can afford (65535 on lavapipe; GPUs that allow 2^31 - 1 groups never need the 2D grid).
  if (max_x > kLargestGridTest) {
    MESSAGE("2D grid not tested: the device allows " << max_x << " workgroups in x");
    return;
  }
  MaterialSortOptions o;
  o.shading_workgroup_size = 1;
  std::vector<uint32_t> ids(max_x + 1000, 2);
  for (size_t i = 0; i < ids.size(); i += 97) ids[i] = 1;
  checkSort(ids, 4, o, "2D grid");
}

TEST_CASE_FIXTURE(GpuTest, "materials: every size across two small chunks, tiny workgroups" *
                               doctest::test_suite("subgroup")) {
  const MaterialTuning tiny{32, 1};
  MaterialSorter* sorter = materialSorter(&tiny);
  const uint32_t c = chunkSize(5, sorter);
  REQUIRE(c <= 64);
  // 5 and 3 materials take the fast path (the test devices have subgroup shuffle), one more than
  // its limit the general one.
  REQUIRE(getMaterialSorterProperties(sorter).fast_material_count >= 5);
  const uint32_t general = getMaterialSorterProperties(sorter).fast_material_count + 1;
  for (uint32_t n = 0; n <= 2 * c + 1; ++n) {
    checkSort(randomIds(n, 5), 5, aligned(n % 2 ? 32 : 1), "random", sorter);
    checkSort(blockIds(n, 1, 3), 3, aligned(4), "runs", sorter);
    checkSort(randomIds(n, general), general, aligned(n % 2 ? 1 : 32), "random, general path", sorter);
  }
  // 1000 materials with 32 threads: 32 rounds per chunk.
  checkSort(randomIds(5 * chunkSize(1000, sorter) + 3, 1000), 1000, aligned(32), "many rounds", sorter);
}

// Material counts up to fast_material_count take the fast path (materials_fast_*.comp), the
// rest the general one: both sides of the limit, at the chunk-size edges.
TEST_CASE_FIXTURE(GpuTest, "materials: both sides of the fast path's material limit" *
                               doctest::test_suite("subgroup")) {
  const uint32_t limit = getMaterialSorterProperties(materialSorter()).fast_material_count;
  REQUIRE(limit >= 32);
  for (uint32_t materials : {1u, 2u, 3u, limit - 1, limit, limit + 1}) {
    const uint32_t c = chunkSize(materials);
    for (uint32_t n : {c - 1, c, c + 1, 2 * c - 1, 5 * c + 33}) {
      for (uint32_t alignment : {1u, 32u}) {
        MaterialSortOptions o = aligned(alignment);
        o.void_material = alignment == 32 ? materials - 1 : kNoVoidMaterial;
        checkSort(randomIds(n, materials), materials, o, "random");
      }
    }
    checkSort(blockIds(211, 53, materials), materials, aligned(32), "blocks");
    checkSort(std::vector<uint32_t>(c + 7, materials - 1), materials, aligned(1), "all the last material");
    std::vector<uint32_t> out_of_range = randomIds(c + 3, materials);
    out_of_range[0] = materials;
    out_of_range[c] = 0xFFFFFFFFu;
    checkSort(out_of_range, materials, aligned(1), "out of range");
  }
}

// The fast path picks its pipeline by ID width (up to 8 materials: 3 bits, else 6), and its lanes
// count materials k * S + lane in pass k (S = subgroup size): both sides of each width and of
// each pass boundary. Cyclic IDs put a different material on every lane of a round, so that every
// rank comes through another lane's running count.
TEST_CASE_FIXTURE(GpuTest, "materials: fast path ID widths and owned-count passes" * doctest::test_suite("subgroup")) {
  MaterialSorter* sorter = materialSorter();
  const auto props = getMaterialSorterProperties(sorter);
  const uint32_t s = props.subgroup_size, limit = props.fast_material_count;
  REQUIRE(limit >= 9);  // the test devices have subgroup shuffle
  std::vector<uint32_t> counts = {7, 8, 9, s - 1, s, s + 1, 2 * s - 1, 2 * s, 2 * s + 1, limit - 1, limit};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (uint32_t materials : counts) {
    if (materials < 1 || materials > limit) continue;
    INFO("materials " << materials << ", subgroup size " << s);
    const uint32_t c = chunkSize(materials, sorter);
    for (uint32_t n : {c - 3, 2 * c + 1})
      checkSort(randomIds(n, materials), materials, aligned(n % 2 ? 32 : 1), "random", sorter);
    std::vector<uint32_t> cyclic(c + 5), reversed(c + 5);
    for (uint32_t p = 0; p < cyclic.size(); ++p) {
      cyclic[p] = p % materials;
      reversed[p] = materials - 1 - (p / 3) % materials;
    }
    checkSort(cyclic, materials, aligned(1), "cyclic", sorter);
    checkSort(reversed, materials, aligned(4), "reversed cyclic, runs of 3", sorter);
  }
}

// The fast path's scan is a workgroup per material, 256, 512 or 1024 threads wide (the narrowest
// whose threads take at most 4 chunks each, else the widest), that gives each thread a run of
// chunks of the material's row and loads them 16 at a time. Rows for each width (600 chunks: 256
// threads, 1283: 512, the rest 1024), with runs of 3 to 18 chunks: just over 16 (a second batch)
// and more than 16 of uneven length (phase 3 loads again), the last thread's run shorter or
// empty.
TEST_CASE_FIXTURE(GpuTest, "materials: fast path with many chunks per scan thread") {
  const MaterialTuning tiny{32, 1};
  MaterialSorter* small_chunks = materialSorter(&tiny);
  const uint32_t materials = getMaterialSorterProperties(small_chunks).fast_material_count;
  const uint32_t c = chunkSize(materials, small_chunks);
  checkSort(randomIds(100 * c - 3, materials), materials, aligned(32), "random", small_chunks);
  for (uint32_t w : {128u, 256u, 512u, 1024u})
    for (uint32_t chunks : {16 * w + 1, 17 * w + 5})
      checkSort(randomIds(chunks * c - 3, materials), materials, aligned(32), "random", small_chunks);
  MaterialSorter* sorter = materialSorter();
  const uint32_t fast = getMaterialSorterProperties(sorter).fast_material_count;
  for (uint32_t n : {600 * chunkSize(fast, sorter) - 1, 1283 * chunkSize(fast, sorter) + 7})
    checkSort(randomIds(n, fast), fast, aligned(32), "random", sorter);
}

// The fast path's scatter runs beside its scan and polls for the prefixes and totals the scan
// publishes; past its poll budget, it adds them up from the chunks' counts. With a budget of 0 it
// reads nothing published, so every workgroup takes that way, whatever the scheduling: both ID
// widths, one chunk and many (more chunks than the subgroup's lanes, a last chunk cut short),
// materials absent from some chunks, the void material and aligned ranges. The default budget
// runs the same inputs, so each case is also checked against the published words.
TEST_CASE_FIXTURE(GpuTest, "materials: fast path with and without the scan's published words" *
                               doctest::test_suite("subgroup")) {
  MaterialTuning own_sums = getMaterialSorterProperties(materialSorter()).tuning;
  own_sums.poll_budget = 0;
  // One read per word and no polls: on a GPU, the first scatter workgroups find some words
  // published and some not, and add up the rest themselves.
  MaterialTuning one_poll = own_sums;
  one_poll.poll_budget = 1;
  for (MaterialSorter* sorter : {materialSorter(), materialSorter(&own_sums), materialSorter(&one_poll)}) {
    const auto props = getMaterialSorterProperties(sorter);
    INFO("poll budget " << props.tuning.poll_budget);
    for (uint32_t materials : {1u, 5u, 8u, 9u, props.fast_material_count}) {
      const uint32_t c = chunkSize(materials, sorter);
      for (uint32_t n : {c / 2 + 1, c, 3 * props.subgroup_size * c + c / 3}) {
        MaterialSortOptions o = aligned(n % 2 ? 32 : 1);
        o.void_material = materials > 1 ? materials - 2 : kNoVoidMaterial;
        checkSort(randomIds(n, materials), materials, o, "random", sorter);
      }
      checkSort(blockIds(97, 3 * c / 97 + 1, materials), materials, aligned(4), "blocks", sorter);
    }
  }
}

// lavapipe stops an invocation's loops after 65,535 iterations in all. With a poll budget of 0
// (a test setting) the fast path's scatter adds every prefix up in loops of ceil(materials /
// lanes) * ceil(chunks / 4) iterations, so there validation refuses sorts past 60,000 of them,
// and only there, and only with that budget.
TEST_CASE_FIXTURE(GpuTest, "materials: a poll budget of 0 within lavapipe's loop cap" * doctest::test_suite("host")) {
  MaterialTuning own_sums = getMaterialSorterProperties(materialSorter()).tuning;
  own_sums.poll_budget = 0;
  const bool lavapipe = context().device().name.rfind("llvmpipe", 0) == 0;
  for (MaterialSorter* sorter : {materialSorter(), materialSorter(&own_sums)}) {
    const auto props = getMaterialSorterProperties(sorter);
    const uint32_t materials = props.fast_material_count;
    const uint32_t passes = (materials + props.subgroup_size - 1) / props.subgroup_size;
    for (const uint64_t quads : {uint64_t{60000 / passes}, uint64_t{60000 / passes + 1}}) {  // of chunks
      const uint64_t pixels = 4 * quads * chunkSize(materials, sorter);
      if (pixels > props.max_pixel_count) continue;
      MaterialSortInfo info;
      info.pixel_count = static_cast<uint32_t>(pixels);
      info.material_count = materials;
      const char* why = validateMaterialSortInfo(sorter, info);
      const bool refused = why && std::strstr(why, "poll budget") != nullptr;
      INFO("poll budget " << props.tuning.poll_budget << ", " << pixels << " pixels: " << std::string(why ? why : "valid"));
      CHECK(refused == (lavapipe && props.tuning.poll_budget == 0 && passes * quads > 60000));
    }
  }
}

// The fast path unrolls min_rounds rounds per thread: odd and large counts, and workgroups of
// one and of several subgroups; at 512 threads the scan's narrowest width is the tuning's.
TEST_CASE_FIXTURE(GpuTest, "materials: fast path tunings" * doctest::test_suite("subgroup")) {
  for (const MaterialTuning tuning :
       {MaterialTuning{32, 3}, MaterialTuning{64, 1}, MaterialTuning{128, 16}, MaterialTuning{512, 2}}) {
    MaterialSorter* sorter = materialSorter(&tuning);
    const auto props = getMaterialSorterProperties(sorter);
    INFO("workgroup " << props.tuning.workgroup_size << ", rounds " << props.tuning.min_rounds);
    for (uint32_t materials : {1u, 7u, props.fast_material_count, props.fast_material_count + 1}) {
      const uint32_t c = chunkSize(materials, sorter);
      for (uint32_t n : {1u, c - 1, c + 1, 3 * c + 5})
        checkSort(randomIds(n, materials), materials, aligned(n % 2 ? 32 : 1), "random", sorter);
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "materials: IDs past the last material count as the last material") {
  std::vector<uint32_t> ids = randomIds(3000, 8);
  ids[17] = 8;
  ids[2000] = 0xFFFFFFFFu;
  checkSort(ids, 8, {}, "out of range");
}

TEST_CASE_FIXTURE(GpuTest, "materials: indirect dispatches visit every shaded pixel once") {
  Context& ctx = context();
  const MaterialSorter* sorter = materialSorter();
  const uint32_t max_x = getMaterialSorterProperties(sorter).max_workgroup_count_x;
  struct Case {
    uint32_t pixels, materials, alignment, shading_size;
  };
  std::vector<Case> cases = {Case{40000, 8, 32, 64}, Case{5000, 300, 1, 32}};
  if (max_x <= kLargestGridTest) cases.push_back(Case{max_x + 77, 3, 32, 1});  // needs a 2D grid
  for (const Case c : cases) {
    INFO(c.pixels << " pixels, " << c.materials << " materials, shading workgroup " << c.shading_size);
    std::vector<uint32_t> ids = randomIds(c.pixels, c.materials);
    if (c.shading_size == 1)
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = i % 1000 == 0 ? 0 : 1;  // material 1 needs a 2D grid
    MaterialSortOptions o;
    o.range_alignment = c.alignment;
    o.void_material = c.materials - 1;
    o.shading_workgroup_size = c.shading_size;
    SortBuffers b(sorter, ids, c.materials, o);
    Guarded visits(c.pixels * 4, 0);
    std::fill_n(visits.data(), c.pixels, 0u);
    const MaterialSortInfo si = b.info(c.pixels, c.materials, o);
    REQUIRE(validateMaterialSortInfo(sorter, si) == nullptr);

    const uint32_t spec_value = c.shading_size;
    const VkSpecializationMapEntry entry{0, 0, 4};
    const VkSpecializationInfo spec{1, &entry, 4, &spec_value};
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = sizeof(vren_radix_materials_test_visit_spv);
    module_info.pCode = vren_radix_materials_test_visit_spv;
    VkShaderModule module = VK_NULL_HANDLE;
    REQUIRE(vkCreateShaderModule(ctx.vkDevice(), &module_info, nullptr, &module) == VK_SUCCESS);
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 40};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    REQUIRE(vkCreatePipelineLayout(ctx.vkDevice(), &layout_info, nullptr, &layout) == VK_SUCCESS);
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT,
                           module, "main", &spec};
    pipeline_info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    REQUIRE(vkCreateComputePipelines(ctx.vkDevice(), VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline) ==
            VK_SUCCESS);
    vkDestroyShaderModule(ctx.vkDevice(), module, nullptr);

    auto address = [&](const BufferRange& r) {
      VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
      info.buffer = r.buffer;
      return vkGetBufferDeviceAddress(ctx.vkDevice(), &info) + r.offset;
    };
    struct {
      VkDeviceAddress counts, offsets, new_to_old, visits;
      uint32_t material, pad;
    } pc{address(si.counts), address(si.offsets), address(si.new_to_old), address(visits.range()), 0, 0};
    std::string error;
    const bool ok = ctx.submit(
        [&](VkCommandBuffer cmd) {
          cmdSortMaterials(sorter, cmd, si);
          VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
          barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
          barrier.dstAccessMask = VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT;
          vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                               &barrier, 0, nullptr, 0, nullptr);
          vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
          for (uint32_t m = 0; m < c.materials; ++m) {  // the void one too: its arguments are empty
            pc.material = m;
            vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
            vkCmdDispatchIndirect(cmd, si.dispatch.buffer, si.dispatch.offset + m * sizeof(VkDispatchIndirectCommand));
          }
          hostBarrier(cmd);
        },
        &error);
    vkDestroyPipeline(ctx.vkDevice(), pipeline, nullptr);
    vkDestroyPipelineLayout(ctx.vkDevice(), layout, nullptr);
    REQUIRE_MESSAGE(ok, error);

    size_t bad = c.pixels;
    for (size_t p = 0; p < c.pixels && bad == c.pixels; ++p) {
      const uint32_t want = ids[p] == o.void_material ? 0 : 1 + (ids[p] << 8);
      if (visits.data()[p] != want) bad = p;
    }
    CHECK_MESSAGE(bad == c.pixels, "pixel " << bad << " of material " << ids[bad] << ": visits word "
                                            << visits.data()[bad]);
    if (c.shading_size == 1) CHECK(b.dispatch.data()[3 + 1] == 2);  // material 1's y
    CHECK(visits.guardsIntact());
  }
}

TEST_CASE_FIXTURE(GpuTest, "materials: validateMaterialSortInfo names what is wrong" * doctest::test_suite("host")) {
  const MaterialSorter* sorter = materialSorter();
  const auto props = getMaterialSorterProperties(sorter);
  const auto fake = [](uintptr_t v) { return reinterpret_cast<VkBuffer>(v); };
  MaterialSortInfo good;
  good.pixel_count = 1000;
  good.material_count = 8;
  good.material_ids = {fake(1), 0, VK_WHOLE_SIZE};
  good.chunk_counts = {fake(2), 0, VK_WHOLE_SIZE};
  good.counts = {fake(3), 0, VK_WHOLE_SIZE};
  good.offsets = {fake(3), 64, VK_WHOLE_SIZE};
  good.dispatch = {fake(4), 0, VK_WHOLE_SIZE};
  good.new_to_old = {fake(5), 0, VK_WHOLE_SIZE};
  CHECK(validateMaterialSortInfo(sorter, good) == nullptr);

  // Each case changes one thing of `good`; every one must be refused with a sentence.
  const std::pair<const char*, std::function<void(MaterialSortInfo&)>> cases[] = {
      {"no materials", [](MaterialSortInfo& i) { i.material_count = 0; }},
      {"too many materials", [&](MaterialSortInfo& i) { i.material_count = props.max_material_count + 1; }},
      {"alignment 3", [](MaterialSortInfo& i) { i.options.range_alignment = 3; }},
      {"alignment 2048", [](MaterialSortInfo& i) { i.options.range_alignment = 2048; }},
      {"alignment 0", [](MaterialSortInfo& i) { i.options.range_alignment = 0; }},
      {"void material out of range", [](MaterialSortInfo& i) { i.options.void_material = 8; }},
      {"shading workgroup 0", [](MaterialSortInfo& i) { i.options.shading_workgroup_size = 0; }},
      {"misaligned offset", [](MaterialSortInfo& i) { i.new_to_old.offset = 4; }},
      {"new_to_old too small", [](MaterialSortInfo& i) { i.new_to_old.size = 999 * 4; }},
      {"new_to_old without room for padding",
       [](MaterialSortInfo& i) {
         i.options.range_alignment = 32;
         i.new_to_old.size = 1000 * 4;
       }},
      {"dispatch too small", [](MaterialSortInfo& i) { i.dispatch.size = 8 * 12 - 4; }},
      {"chunk_counts too small", [](MaterialSortInfo& i) { i.chunk_counts.size = 4; }},
      {"counts and offsets overlap", [](MaterialSortInfo& i) { i.offsets.offset = 16; }},
      {"new_to_old overlaps the IDs", [](MaterialSortInfo& i) { i.new_to_old = i.material_ids; }},
      {"missing counts", [](MaterialSortInfo& i) { i.counts.buffer = VK_NULL_HANDLE; }},
      {"missing IDs", [](MaterialSortInfo& i) { i.material_ids.buffer = VK_NULL_HANDLE; }},
  };
  for (const auto& [what, change] : cases) {
    MaterialSortInfo i = good;
    change(i);
    const char* why = validateMaterialSortInfo(sorter, i);
    CHECK_MESSAGE(why != nullptr, what);
    if (why) CHECK_MESSAGE(std::string(why).back() == '.', why);
  }
  // No pixels: nothing is read or written, so no buffer is needed.
  MaterialSortInfo i = good;
  i.material_ids.buffer = VK_NULL_HANDLE;
  i.pixel_count = 0;
  i.new_to_old.buffer = VK_NULL_HANDLE;
  CHECK(validateMaterialSortInfo(sorter, i) == nullptr);
}

TEST_CASE_FIXTURE(GpuTest, "materials: creation fails cleanly" * doctest::test_suite("host")) {
  Context& ctx = context();
  MaterialSorterCreateInfo info;
  info.binding.instance = ctx.instance();
  info.binding.physical_device = ctx.physicalDevice();
  info.binding.get_instance_proc_addr = vkGetInstanceProcAddr;
  MaterialSorter* sorter = reinterpret_cast<MaterialSorter*>(&info);  // must be reset to null
  std::string why;
  CHECK(createMaterialSorter(info, &sorter, &why) == VK_ERROR_INITIALIZATION_FAILED);
  CHECK(sorter == nullptr);
  CHECK(why.find("MaterialSorterCreateInfo::binding needs") != std::string::npos);  // names the missing device

  if (ctx.subgroupSizeControlEnabled()) {
    info.binding.device = ctx.vkDevice();
    info.binding.subgroup_size_control_enabled = true;
    info.binding.required_subgroup_size = 3;
    why.clear();
    CHECK(createMaterialSorter(info, &sorter, &why) != VK_SUCCESS);
    CHECK(sorter == nullptr);
    CHECK(!why.empty());
  }
  destroyMaterialSorter(nullptr);
}

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string err;
};

// Runs the command in-process with stderr captured.
CliRun runCli(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::fflush(stderr);
  const int saved = dup(2);
  FILE* capture = std::tmpfile();
  dup2(fileno(capture), 2);
  const int code = cli::runMaterials(static_cast<int>(argv.size()), argv.data());
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(capture);
  std::string err;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), capture)) err.append(buffer, n);
  std::fclose(capture);
  return {code, err};
}

void writeFile(const fs::path& path, const std::vector<uint32_t>& words, size_t extra_bytes = 0) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  for (size_t i = 0; i < extra_bytes; ++i) f.put('\x01');
}

std::vector<uint32_t> readFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("vren_materials_cli_" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("materials CLI: bad input fails with one clear message and writes nothing" * doctest::test_suite("host")) {
  TempDir dir;
  const std::string ids = (dir.path / "ids.u32").string();
  const std::string out = (dir.path / "out").string();
  std::vector<uint32_t> map = randomIds(6 * 4, 5);
  writeFile(ids, map);
  const std::vector<std::string> base = {"--ids", ids, "--width", "6", "--height", "4", "--materials", "5", "--out", out};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  auto replace = [&](const std::string& flag, const std::string& value) {
    std::vector<std::string> args = base;
    *(std::find(args.begin(), args.end(), flag) + 1) = value;
    return args;
  };
  struct Case {
    const char* what;
    std::vector<std::string> args;
    int code;
    const char* mentions;
  };
  const std::string missing = (dir.path / "missing.u32").string();
  writeFile(dir.path / "long.u32", map, 4);
  writeFile(dir.path / "odd.u32", map, 2);
  std::vector<uint32_t> bad_map = map;
  bad_map[6 + 1] = 5;
  writeFile(dir.path / "bad.u32", bad_map);
  const std::vector<Case> cases = {
      {"no options", {}, 2, "needs --ids"},
      {"missing --out", {"--ids", ids, "--width", "6", "--height", "4", "--materials", "5"}, 2, "needs --ids"},
      {"unknown option", with({"--colour", "blue"}), 2, "'--colour'"},
      {"option without value", with({"--align"}), 2, "needs a value"},
      {"width not a number", replace("--width", "six"), 2, "--width"},
      {"width 0", replace("--width", "0"), 2, "--width"},
      {"height negative", replace("--height", "-4"), 2, "--height"},
      {"materials 0", replace("--materials", "0"), 2, "--materials"},
      {"materials too many", replace("--materials", "70000"), 2, "--materials"},
      {"align not a power of two", with({"--align", "24"}), 2, "--align"},
      {"align too large", with({"--align", "2048"}), 2, "--align"},
      {"void material out of range", with({"--void-material", "5"}), 2, "--void-material"},
      {"device not a number", with({"--device", "gpu"}), 2, "--device"},
      {"missing file", replace("--ids", missing), 1, "missing.u32"},
      {"file too long", replace("--ids", (dir.path / "long.u32").string()), 1, "needs 24 (96 bytes)"},
      {"file of odd size", replace("--ids", (dir.path / "odd.u32").string()), 1, "not a multiple of 4"},
      {"wrong dimensions", replace("--height", "5"), 1, "holds 24 IDs"},
      {"ID too large", replace("--ids", (dir.path / "bad.u32").string()), 1, "Pixel 7 (x 1, y 1) has material ID 5"},
      {"device that does not exist", with({"--device", "99"}), 1, "Device 99"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const CliRun run = runCli(c.args);
    CHECK(run.code == c.code);
    CHECK_MESSAGE(run.err.find(c.mentions) != std::string::npos, run.err);
    CHECK(std::count(run.err.begin(), run.err.end(), '\n') <= 2);
    CHECK((!fs::exists(out) || fs::is_empty(out)));
  }
}

TEST_CASE("materials CLI: writes the sort's outputs and pictures") {
  TempDir dir;
  const uint32_t width = 37, height = 23, materials = 6;
  std::vector<uint32_t> map = blockIds(width, height, materials);
  const fs::path ids = dir.path / "ids.u32";
  writeFile(ids, map);
  const fs::path out = dir.path / "out";
  const CliRun run = runCli({"--ids", ids.string(), "--width", std::to_string(width), "--height",
                             std::to_string(height), "--materials", std::to_string(materials), "--out", out.string(),
                             "--void-material", "5", "--align", "32"});
  REQUIRE_MESSAGE(run.code == 0, run.err);
  MaterialSortOptions o;
  o.range_alignment = 32;
  o.void_material = 5;
  const Reference want = reference(map, materials, o, 65535);
  CHECK(readFile(out / "counts.u32") == want.counts);
  CHECK(readFile(out / "offsets.u32") == want.offsets);
  CHECK(readFile(out / "dispatch.u32") == want.dispatch);
  CHECK(readFile(out / "new_to_old.u32") == want.new_to_old);
  for (const char* png : {"ids.png", "sorted.png"}) {
    std::ifstream f(out / png, std::ios::binary);
    char magic[4] = {};
    f.read(magic, 4);
    CHECK_MESSAGE(std::string(magic + 1, 3) == "PNG", png);
  }
  size_t leftovers = 0;
  for (const auto& e : fs::directory_iterator(out)) leftovers += e.path().string().find(".tmp") != std::string::npos;
  CHECK(leftovers == 0);
}

}  // namespace vren::radix::test
