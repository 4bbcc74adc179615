// bf16 copies of weight matrices for bf16 GEMMs. Converting a weight costs a full read of its fp32
// values, as much memory traffic as a decode step's whole GEMM, so a weight is converted once and
// its copy kept until the weights change. A weight has one copy per layout it is read in (dense
// rows for oneDNN and AMX, panels for the sampler's AVX512-BF16 kernel). Every AdamW update and
// every weights_changed() call (JS loading weights in place) starts a new epoch that outdates all
// copies; a fingerprint of sampled elements also catches a new buffer that reuses a freed one's
// address. An AdamW update writes the dense-rows copies of the weights it updates as it goes
// (Bf16Refresh), while each block of new values is still in cache. Copies are bounded by
// MASO_BF16_CACHE_MB (default 4096; 0 turns the cache off), least recently used out first. Callers
// hold a reference while their GEMM reads a copy: a lane thread can evict or outdate a copy another
// thread is reading, and that copy then lives on (unchanged) until its reader lets go.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <tuple>
#include <vector>

#include "kernels.h"

namespace maso {

namespace {

constexpr int FINGERPRINT = 16;
std::atomic<uint64_t> g_epoch{0};
// the epoch of a copy being written by an update: no current epoch matches it, so a reader in the
// meantime converts for itself
constexpr uint64_t kRefreshing = ~(uint64_t)0;
thread_local const float* t_weight = nullptr;

using Key = std::tuple<const float*, int, int, int, Bf16Layout>;  // address, rows, cols, leading dimension, layout
struct Copy {
  uint64_t epoch;
  uint32_t sample[FINGERPRINT];
  std::shared_ptr<Bf16Bits> bits;
  std::list<Key>::iterator use;
};
std::mutex g_mu;
std::map<Key, Copy> g_copies;
std::list<Key> g_lru;  // front: least recently used
size_t g_bytes = 0;

size_t limit_bytes() {
  static const size_t limit = [] {
    const char* env = std::getenv("MASO_BF16_CACHE_MB");
    const long mb = env && *env ? std::strtol(env, nullptr, 10) : 4096;
    return mb > 0 ? (size_t)mb << 20 : (size_t)0;
  }();
  return limit;
}

void fingerprint(uint32_t* out, const float* w, int rows, int cols, int ld) {
  const int64_t n = (int64_t)rows * cols;
  for (int i = 0; i < FINGERPRINT; i++) {
    const int64_t e = n <= 1 ? 0 : (int64_t)((double)i * (n - 1) / (FINGERPRINT - 1));
    std::memcpy(&out[i], w + (size_t)(e / cols) * ld + e % cols, 4);
  }
}

void drop(std::map<Key, Copy>::iterator it) {
  g_bytes -= it->second.bits->size() * sizeof(uint16_t);
  g_lru.erase(it->second.use);
  g_copies.erase(it);
}

}  // namespace

WeightOperand::WeightOperand(const float* w) : prev(t_weight) { t_weight = w; }
WeightOperand::~WeightOperand() { t_weight = prev; }
const float* weight_operand() { return t_weight; }

void weights_changed() { g_epoch.fetch_add(1, std::memory_order_relaxed); }

Bf16Copy cached_bf16(const float* w, int rows, int cols, int ld, Bf16Layout layout) {
  const size_t elems = bf16_copy_size(layout, rows, cols), bytes = elems * sizeof(uint16_t);
  if (bytes > limit_bytes()) return nullptr;
  uint32_t sample[FINGERPRINT];
  fingerprint(sample, w, rows, cols, ld);
  const uint64_t epoch = g_epoch.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_mu);
  const Key key{w, rows, cols, ld, layout};
  auto it = g_copies.find(key);
  if (it != g_copies.end()) {
    Copy& c = it->second;
    g_lru.splice(g_lru.end(), g_lru, c.use);
    if (c.epoch != epoch || std::memcmp(c.sample, sample, sizeof sample) != 0) {
      // in place unless another thread is reading it (references are only taken under this lock)
      if (c.bits.use_count() > 1) {
        try {
          c.bits = std::make_shared<Bf16Bits>(c.bits->size());
        } catch (const std::bad_alloc&) {
          drop(it);
          return nullptr;
        }
      }
      pack_bf16_layout(layout, c.bits->data(), w, rows, cols, ld);
      c.epoch = epoch;
      std::memcpy(c.sample, sample, sizeof sample);
    }
    return c.bits;
  }
  while (g_bytes + bytes > limit_bytes() && !g_lru.empty()) drop(g_copies.find(g_lru.front()));
  try {
    Copy c{epoch, {}, std::make_shared<Bf16Bits>(elems), {}};
    std::memcpy(c.sample, sample, sizeof sample);
    pack_bf16_layout(layout, c.bits->data(), w, rows, cols, ld);
    g_lru.push_back(key);
    c.use = std::prev(g_lru.end());
    it = g_copies.emplace(key, std::move(c)).first;
  } catch (const std::bad_alloc&) {
    if (!g_lru.empty() && g_lru.back() == key) g_lru.pop_back();
    return nullptr;  // the caller converts into its scratch instead
  }
  g_bytes += bytes;
  return it->second.bits;
}

Bf16Refresh::Bf16Refresh(const float* base, int64_t n) : epoch(g_epoch.load(std::memory_order_relaxed)) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto& [key, c] : g_copies) {
    const auto& [w, rows, cols, ld, layout] = key;
    const int64_t begin = w - base, size = (int64_t)rows * cols;
    // a reader holds it: it keeps the old values it reads, and this update's are packed on next use
    if (layout != Bf16Layout::rows || ld != cols || w < base || begin + size > n || c.bits.use_count() > 1) continue;
    c.epoch = kRefreshing;
    spans.push_back({begin, begin + size, w, rows, cols, c.bits});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  // two copies over the same values (another shape of one weight): the later stays outdated and
  // converts on first use
  size_t kept = 0;
  for (size_t i = 0; i < spans.size(); i++)
    if (kept == 0 || spans[i].begin >= spans[kept - 1].end) spans[kept++] = std::move(spans[i]);
  spans.resize(kept);
}

void Bf16Refresh::write(const float* base, int64_t i0, int64_t i1) const {
  // the first span ending past i0 (ends are sorted, as the spans are disjoint)
  auto it = std::upper_bound(spans.begin(), spans.end(), i0, [](int64_t i, const Span& sp) { return i < sp.end; });
  for (; it != spans.end() && it->begin < i1; ++it) {
    const int64_t from = std::max(i0, it->begin), to = std::min(i1, it->end);
    to_bf16(it->bits->data() + (from - it->begin), base + from, to - from);
  }
}

Bf16Refresh::~Bf16Refresh() {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const Span& sp : spans) {
    auto it = g_copies.find({sp.w, sp.rows, sp.cols, sp.cols, Bf16Layout::rows});
    // dropped, or repacked into new storage by a reader meanwhile: that one is current already
    if (it == g_copies.end() || it->second.bits != sp.bits || it->second.epoch != kRefreshing) continue;
    it->second.epoch = epoch;
    fingerprint(it->second.sample, sp.w, sp.rows, sp.cols, sp.cols);
  }
}

}  // namespace maso
