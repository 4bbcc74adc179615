// The products inside training attention's per-(sequence, head) tasks, summed by maso itself:
// every element of C is one accumulator that takes A(i,k)·B(k,j) for k ascending, fused
// multiply-add where the level has FMA, then is scaled by alpha once. So an element's bits depend
// on its row of A and column of B only: not on the BLAS, the kernels it picks for the CPU
// (OPENBLAS_CORETYPE) or its version, nor on the tiling or the thread count. Register tiles of
// up to 6 rows by 4 vectors; A is read through two strides, so A and its transpose are one kernel.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace maso {
namespace ordered {

#if defined(__AVX512F__) && defined(__FMA__)
using V = __m512;
constexpr int W = 16;
static inline V vzero() { return _mm512_setzero_ps(); }
static inline V vload(const float* p) { return _mm512_loadu_ps(p); }
static inline void vstore(float* p, V x) { _mm512_storeu_ps(p, x); }
static inline V vset(float x) { return _mm512_set1_ps(x); }
static inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
static inline V vmul(V a, V b) { return _mm512_mul_ps(a, b); }
static inline V vadd(V a, V b) { return _mm512_add_ps(a, b); }
static inline V vload_part(const float* p, int m) { return _mm512_maskz_loadu_ps((__mmask16)((1u << m) - 1), p); }
static inline void vstore_part(float* p, V x, int m) { _mm512_mask_storeu_ps(p, (__mmask16)((1u << m) - 1), x); }
constexpr int JMAX = 4;
#elif defined(__AVX2__) && defined(__FMA__)
using V = __m256;
constexpr int W = 8;
static inline V vzero() { return _mm256_setzero_ps(); }
static inline V vload(const float* p) { return _mm256_loadu_ps(p); }
static inline void vstore(float* p, V x) { _mm256_storeu_ps(p, x); }
static inline V vset(float x) { return _mm256_set1_ps(x); }
static inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
static inline V vmul(V a, V b) { return _mm256_mul_ps(a, b); }
static inline V vadd(V a, V b) { return _mm256_add_ps(a, b); }
static inline __m256i part_mask(int m) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
static inline V vload_part(const float* p, int m) { return _mm256_maskload_ps(p, part_mask(m)); }
static inline void vstore_part(float* p, V x, int m) { _mm256_maskstore_ps(p, part_mask(m), x); }
constexpr int JMAX = 2;
#elif defined(__SSE2__) && !defined(__FMA__)
using V = __m128;
constexpr int W = 4;
static inline V vzero() { return _mm_setzero_ps(); }
static inline V vload(const float* p) { return _mm_loadu_ps(p); }
static inline void vstore(float* p, V x) { _mm_storeu_ps(p, x); }
static inline V vset(float x) { return _mm_set1_ps(x); }
static inline V vfma(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
static inline V vmul(V a, V b) { return _mm_mul_ps(a, b); }
static inline V vadd(V a, V b) { return _mm_add_ps(a, b); }
static inline V vload_part(const float* p, int m) {
  return _mm_setr_ps(p[0], m > 1 ? p[1] : 0.0f, m > 2 ? p[2] : 0.0f, 0.0f);  // m < 4
}
static inline void vstore_part(float* p, V x, int m) {
  alignas(16) float lane[4];
  _mm_store_ps(lane, x);
  p[0] = lane[0];
  if (m > 1) p[1] = lane[1];
  if (m > 2) p[2] = lane[2];
}
constexpr int JMAX = 2;
#else
#define MASO_ORDERED_SCALAR 1
constexpr int W = 4;
#endif

// The scalar form of one vector lane's step: a tail element gets the bits a lane would give it.
static inline float sfma(float a, float b, float c) {
#if defined(__FMA__) || defined(__aarch64__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// C[i][j] = alpha · Σ_k A(i,k) B[k·ldb + j]  (accumulate: C[i][j] += that), A(i,k) = A[i·ai + k·ak].
// `padded`: B's rows may be read up to N rounded up to W (maso packs them so) and the vector tiles
// cover every column; otherwise columns past the last whole vector take the scalar path.
struct Product {
  int M, N;
  float alpha;
  const float* A;
  size_t ai, ak;
  const float* B;
  size_t ldb;
  bool padded, accumulate;
  float* C;
  size_t ldc;
};

#ifndef MASO_ORDERED_SCALAR
// Rows [i0, i0+R) by columns [j0, j0 + n), n <= J·W, over k in [kb, ke).
template <int R, int J>
static inline void tile(const Product& p, int i0, int j0, int n, int kb, int ke) {
  V acc[R][J];
  for (int r = 0; r < R; r++)
    for (int j = 0; j < J; j++) acc[r][j] = vzero();
  const float* a0 = p.A + (size_t)i0 * p.ai;
  for (int k = kb; k < ke; k++) {
    const float* b = p.B + (size_t)k * p.ldb + j0;
    V bv[J];
    for (int j = 0; j < J; j++) bv[j] = vload(b + j * W);
    const float* ak = a0 + (size_t)k * p.ak;
    for (int r = 0; r < R; r++) {
      const V a = vset(ak[(size_t)r * p.ai]);
      for (int j = 0; j < J; j++) acc[r][j] = vfma(a, bv[j], acc[r][j]);
    }
  }
  const V alpha = vset(p.alpha);
  for (int r = 0; r < R; r++) {
    float* c = p.C + (size_t)(i0 + r) * p.ldc + j0;
    for (int j = 0; j < J; j++) {
      const int m = std::min(W, n - j * W);
      if (m <= 0) break;
      V t = vmul(alpha, acc[r][j]);
      if (m == W) {
        vstore(c + j * W, p.accumulate ? vadd(vload(c + j * W), t) : t);
        continue;
      }
      vstore_part(c + j * W, p.accumulate ? vadd(vload_part(c + j * W, m), t) : t, m);
    }
  }
}
#endif

// One column j of rows [i0, i1) on the scalar path (columns that no whole vector covers).
static inline void column(const Product& p, int i0, int i1, int j, int kb, int ke) {
  for (int i = i0; i < i1; i++) {
    float acc = 0.0f;
    for (int k = kb; k < ke; k++) acc = sfma(p.A[(size_t)i * p.ai + (size_t)k * p.ak], p.B[(size_t)k * p.ldb + j], acc);
    float& c = p.C[(size_t)i * p.ldc + j];
    c = p.accumulate ? c + p.alpha * acc : p.alpha * acc;
  }
}

#ifndef MASO_ORDERED_SCALAR
template <int R>
static inline void tile_j(const Product& p, int i0, int j0, int n, int kb, int ke) {
  const int J = (n + W - 1) / W;
  if (J == 1) return tile<R, 1>(p, i0, j0, n, kb, ke);
  if constexpr (JMAX == 2) {
    return tile<R, 2>(p, i0, j0, n, kb, ke);
  } else {
    if (J == 2) return tile<R, 2>(p, i0, j0, n, kb, ke);
    if (J == 3) return tile<R, 3>(p, i0, j0, n, kb, ke);
    return tile<R, 4>(p, i0, j0, n, kb, ke);
  }
}

template <int R>
static inline void rows(const Product& p, int i0, int cols, int kb, int ke) {
  const int vec_cols = p.padded ? cols : cols / W * W;
  for (int j0 = 0; j0 < vec_cols; j0 += JMAX * W) tile_j<R>(p, i0, j0, std::min(JMAX * W, vec_cols - j0), kb, ke);
  for (int j = vec_cols; j < cols; j++) column(p, i0, i0 + R, j, kb, ke);
}
#endif

// Row tiles of RT rows; `limits(i0, i1)` gives the tile's k range and column end as
// {kb, ke, cols}: the causal mask lets a tile skip the keys and scores none of its rows reads.
constexpr int RT = 6;
struct Limits {
  int kb, ke, cols;
};

template <class LimitsOf>
static inline void gemm(const Product& p, LimitsOf limits) {
  for (int i0 = 0; i0 < p.M; i0 += RT) {
    const int r = std::min(RT, p.M - i0);
    const Limits l = limits(i0, i0 + r);
    if (l.cols <= 0) continue;
#ifndef MASO_ORDERED_SCALAR
    switch (r) {
      case 1: rows<1>(p, i0, l.cols, l.kb, l.ke); break;
      case 2: rows<2>(p, i0, l.cols, l.kb, l.ke); break;
      case 3: rows<3>(p, i0, l.cols, l.kb, l.ke); break;
      case 4: rows<4>(p, i0, l.cols, l.kb, l.ke); break;
      case 5: rows<5>(p, i0, l.cols, l.kb, l.ke); break;
      default: rows<6>(p, i0, l.cols, l.kb, l.ke); break;
    }
#else
    for (int j = 0; j < l.cols; j++) column(p, i0, i0 + r, j, l.kb, l.ke);
#endif
  }
}

}  // namespace ordered
}  // namespace maso
