// Small vector helpers shared by the attention kernels (training and decode). Unit-stride loops
// the compiler vectorises; inline so they cost nothing across translation units.
#pragma once

namespace maso {

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
