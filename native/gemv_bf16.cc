// One-row bf16 products against a cached bf16 weight (a decode step at batch 1): y = alpha x W^T
// (+ beta y), W stored (N, K). A GEMV reads each weight once and does two flops per element, so it
// runs at memory speed; a general matmul primitive spends its time on setup and blocking instead.
// x is rounded to bf16 like any bf16 GEMM operand; dot products accumulate in fp32.
#include <vector>

#include "cpu.h"
#include "kernels.h"
#include "vec.h"
#if MASO_BF16_KERNELS
#include <immintrin.h>
#endif

namespace maso {

#if MASO_BF16_KERNELS
MASO_TARGET_BF16 static float dot_bf16(const uint16_t* w, const uint16_t* x, int K) {
  // four independent sums hide the dot-product instruction's latency; added in a fixed order
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int k = 0;
  for (; k + 128 <= K; k += 128) {
    a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_loadu_si512(w + k), (__m512bh)_mm512_loadu_si512(x + k));
    a1 = _mm512_dpbf16_ps(a1, (__m512bh)_mm512_loadu_si512(w + k + 32), (__m512bh)_mm512_loadu_si512(x + k + 32));
    a2 = _mm512_dpbf16_ps(a2, (__m512bh)_mm512_loadu_si512(w + k + 64), (__m512bh)_mm512_loadu_si512(x + k + 64));
    a3 = _mm512_dpbf16_ps(a3, (__m512bh)_mm512_loadu_si512(w + k + 96), (__m512bh)_mm512_loadu_si512(x + k + 96));
  }
  __m512 acc = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
  for (; k + 32 <= K; k += 32)
    acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_loadu_si512(w + k), (__m512bh)_mm512_loadu_si512(x + k));
  if (k < K) {
    const __mmask32 m = (__mmask32)((1ull << (K - k)) - 1ull);
    acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_maskz_loadu_epi16(m, w + k), (__m512bh)_mm512_maskz_loadu_epi16(m, x + k));
  }
  return _mm512_reduce_add_ps(acc);
}

bool gemv_bf16(int N, int K, float alpha, const float* x, int incx, const uint16_t* w, float beta, float* y) {
  if (!cpu_avx512bf16()) return false;
  thread_local std::vector<uint16_t> xb;  // grown once, not allocated per decode step
  if (xb.size() < (size_t)K) xb.resize(K);
  if (incx == 1) to_bf16(xb.data(), x, K);
  else pack_bf16(xb.data(), x, K, 1, incx);  // a strided column: K rows of one
  const uint16_t* xp = xb.data();
#pragma omp parallel for schedule(static) if (pays((int64_t)N * K))
  for (int j = 0; j < N; j++) {
    const float d = alpha * dot_bf16(w + (size_t)j * K, xp, K);
    y[j] = beta == 0.0f ? d : d + beta * y[j];
  }
  return true;
}
#else
bool gemv_bf16(int, int, float, const float*, int, const uint16_t*, float, float*) { return false; }
#endif

}  // namespace maso
