// Small helpers shared by the kernels (training and decode). Unit-stride loops
// the compiler vectorises; inline so they cost nothing across translation units.
#pragma once
#include <cmath>
#include <cstdint>

#include "vexp.h"

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

static inline float max_of(const float* x, int n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

// w[j] = exp((x[j] - mx) * t) for j < n; returns their sum (in double: n may be 150k)
static inline double exp_scaled(float* w, const float* x, float mx, float t, int n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; i++) {
    w[i] = exp_nonpos((x[i] - mx) * t);
    s += w[i];
  }
  return s;
}

}  // namespace maso
