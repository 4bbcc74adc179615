// Small helpers shared by the kernels (training and decode). Unit-stride loops
// the compiler vectorises; inline so they cost nothing across translation units.
#pragma once
#include <cstdint>

namespace maso {

// A parallel region costs microseconds (waking the pool, then the join), so a loop touching fewer
// than this many floats runs on the calling thread: the many small ops of a small model's step
// would otherwise spend more time forking and joining than computing.
constexpr int64_t kParallelMin = 1 << 15;
static inline bool pays(int64_t work) { return work >= kParallelMin; }

static inline float dot(const float* a, const float* b, int n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static inline void axpy_small(float* y, const float* x, float a, int n) {
#pragma omp simd
  for (int i = 0; i < n; i++) y[i] += a * x[i];
}

}  // namespace maso
