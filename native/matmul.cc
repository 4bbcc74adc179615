// GEMM dispatch and the linear layer. The naive kernel stays beside the BLAS path: it is the
// portable fallback when no CBLAS is found and the reference the fast path is tested against.
#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "kernels.h"
#include "vec.h"
#if defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#if MASO_BLAS_ID == 1
#include <cblas.h>
#elif MASO_BLAS_ID == 2
#include <Accelerate/Accelerate.h>
#endif

namespace maso {

const char* gemm_name() {
#if MASO_BLAS_ID == 1
  return "openblas";
#elif MASO_BLAS_ID == 2
  return "accelerate";
#else
  return "portable";
#endif
}

// Portable GEMM: packs op(B) into a contiguous (K, N) panel so the inner loop is a unit-stride
// axpy the compiler vectorises; rows of C are split across threads.
void gemm_naive(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc) {
  std::vector<float> Bp((size_t)K * N);
  for (int p = 0; p < K; p++)
    for (int j = 0; j < N; j++)
      Bp[(size_t)p * N + j] = transB ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j];
  const float* bp = Bp.data();
#pragma omp parallel for schedule(static)
  for (int i = 0; i < M; i++) {
    float* c = C + (size_t)i * ldc;
    std::vector<float> acc(N, 0.0f);
    float* a = acc.data();
    for (int p = 0; p < K; p++) {
      float aip = transA ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p];
      if (aip == 0.0f) continue;
      const float* brow = bp + (size_t)p * N;
#pragma omp simd
      for (int j = 0; j < N; j++) a[j] += aip * brow[j];
    }
    if (beta == 0.0f) {
      for (int j = 0; j < N; j++) c[j] = alpha * a[j];
    } else {
      for (int j = 0; j < N; j++) c[j] = alpha * a[j] + beta * c[j];
    }
  }
}

// ---- few rows times a transposed weight: C = alpha A B^T + beta C, reading B in place ----------
// A decode step multiplies a handful of rows (the sequences decoding at once) by each weight. The
// BLAS would first pack the whole weight into panels, an extra pass over memory for a product that
// does two flops per weight element. This kernel streams the weight rows as they lie: a tile of
// kNtCols weight rows times up to kNtRows rows of A keeps one SIMD accumulator per element of C,
// accumulated lane-wise over K with FMAs (A stays in L1/L2), then reduced by a fixed transpose-add
// tree. Every element of C is summed in one order that depends on K only: not on M, N, the tile
// it falls in or the thread count.
static const int kNtCols = 4;  // weight rows (columns of C) per tile
// Tiles of weight rows prefetched ahead. A weight row is a short stream (K floats) that the
// hardware prefetcher barely learns before it ends; a decode step finds its weights in DRAM or L3.
static const int kNtAhead = 2;

#if defined(__AVX512F__) && defined(__FMA__)
#define MASO_GEMM_NT_ROWS 1
using VecNt = __m512;
using MaskNt = __mmask16;
static const int kNtLanes = 16, kNtRows = 4;  // 16 accumulators + 4 B + 1 A of 32 registers

// the first n (< 16) lanes
static inline MaskNt nt_mask(int n) { return (MaskNt)((1u << n) - 1u); }
static inline __m512 nt_load(const float* p) { return _mm512_loadu_ps(p); }
static inline __m512 nt_load_tail(const float* p, MaskNt m) { return _mm512_maskz_loadu_ps(m, p); }
static inline __m512 nt_fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
static inline __m512 nt_zero() { return _mm512_setzero_ps(); }

// The zero-masked forms of the shuffles: the plain ones start from _mm512_undefined_ps, which
// GCC 12 reports as used uninitialized once the inputs are constant zeros (missing columns).
static const __mmask16 kAll = 0xFFFF;
#define NT_QUADS(a, b, imm) _mm512_maskz_shuffle_f32x4(kAll, a, b, imm)
#define NT_PAIRS(a, imm) _mm512_maskz_permute_ps(kAll, a, imm)

// four accumulators -> their four sums (lane c = the sum of a_c): halves, quarters, then in-lane
static inline __m128 nt_sum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  // [a0 q0+q2, a0 q1+q3, a1 q0+q2, a1 q1+q3]
  const __m512 s01 = _mm512_add_ps(NT_QUADS(a0, a1, 0x44), NT_QUADS(a0, a1, 0xEE));
  const __m512 s23 = _mm512_add_ps(NT_QUADS(a2, a3, 0x44), NT_QUADS(a2, a3, 0xEE));
  // 128-bit lane c: four partial sums p0..p3 of a_c
  const __m512 t = _mm512_add_ps(NT_QUADS(s01, s23, 0x88), NT_QUADS(s01, s23, 0xDD));
  const __m512 u = _mm512_add_ps(t, NT_PAIRS(t, 0xB1));  // p0+p1, p2+p3
  const __m512 v = _mm512_add_ps(u, NT_PAIRS(u, 0x4E));  // (p0+p1)+(p2+p3)
  const __m512i first = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_maskz_extractf32x4_ps(0xF, _mm512_maskz_permutexvar_ps(kAll, first, v), 0);
}
#undef NT_PAIRS
#undef NT_QUADS

#elif defined(__AVX2__) && defined(__FMA__)
#define MASO_GEMM_NT_ROWS 1
using VecNt = __m256;
using MaskNt = __m256i;
// 12 accumulators + 4 B of 16 registers; the FMAs read one operand from memory
static const int kNtLanes = 8, kNtRows = 3;

// the first n (< 8) lanes
static inline MaskNt nt_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256 nt_load(const float* p) { return _mm256_loadu_ps(p); }
static inline __m256 nt_load_tail(const float* p, MaskNt m) { return _mm256_maskload_ps(p, m); }
static inline __m256 nt_fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
static inline __m256 nt_zero() { return _mm256_setzero_ps(); }

static inline __m128 nt_sum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  // [a0 lo+hi | a1 lo+hi], [a2 lo+hi | a3 lo+hi]
  const __m256 s01 = _mm256_add_ps(_mm256_permute2f128_ps(a0, a1, 0x20), _mm256_permute2f128_ps(a0, a1, 0x31));
  const __m256 s23 = _mm256_add_ps(_mm256_permute2f128_ps(a2, a3, 0x20), _mm256_permute2f128_ps(a2, a3, 0x31));
  const __m256 h = _mm256_hadd_ps(s01, s23);  // [a0 p0+p1, a0 p2+p3, a2 .., a2 .. | a1 .., a1 .., a3 .., a3 ..]
  const __m256 g = _mm256_hadd_ps(h, h);      // [a0, a2, a0, a2 | a1, a3, a1, a3]
  return _mm_unpacklo_ps(_mm256_castps256_ps128(g), _mm256_extractf128_ps(g, 1));
}
#elif defined(__SSE2__)
// The x86-64 baseline: four SSE lanes, multiply then add (no FMA). Only the sampler's row-invariant
// products take this path (kNtFast): for training the BLAS is faster at this level.
#define MASO_GEMM_NT_ROWS 1
#define MASO_GEMM_NT_SSE 1
using VecNt = __m128;
using MaskNt = int;  // the lane count
static const int kNtLanes = 4, kNtRows = 3;  // 12 accumulators + 4 B of 16 registers

static inline MaskNt nt_mask(int n) { return n; }
static inline __m128 nt_load(const float* p) { return _mm_loadu_ps(p); }
static inline __m128 nt_load_tail(const float* p, MaskNt n) {
  alignas(16) float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < n; i++) t[i] = p[i];
  return _mm_load_ps(t);
}
static inline __m128 nt_fma(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
static inline __m128 nt_zero() { return _mm_setzero_ps(); }

static inline __m128 nt_sum4(__m128 a0, __m128 a1, __m128 a2, __m128 a3) {
  _MM_TRANSPOSE4_PS(a0, a1, a2, a3);  // lane c of a<i> = lane i of the old a<c>
  return _mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3));
}
#endif

#ifdef MASO_GEMM_NT_ROWS
// beta C + r on four lanes (fused where the level has FMA)
static inline __m128 nt_axpy(__m128 b, __m128 c, __m128 r) {
#ifdef MASO_GEMM_NT_SSE
  return _mm_add_ps(_mm_mul_ps(b, c), r);
#else
  return _mm_fmadd_ps(b, c, r);
#endif
}

struct NtShape {
  int K, lda, ldb, ldc;
  float alpha, beta;
};

// One tile: MB (<= 4) rows of A times NB (<= kNtCols) rows of B, accumulator c<i><j> for C[i][j].
// Named variables, not an array, so the compiler keeps all sixteen in registers. Columns the tile
// lacks keep zero accumulators: each real element goes through the same tree in every tile. PF:
// prefetch the weight rows at `ahead` while this tile streams its own (the first row tile only).
#define NT_FMA(i, j) \
  if (MB > i && NB > j) c##i##j = nt_fma(a##i, b##j, c##i##j)
#define NT_ROW(i, LOAD)                                 \
  if (MB > i) {                                         \
    const VecNt a##i = LOAD(A + (size_t)i * s.lda + k); \
    NT_FMA(i, 0);                                       \
    NT_FMA(i, 1);                                       \
    NT_FMA(i, 2);                                       \
    NT_FMA(i, 3);                                       \
  }
#define NT_STEP(LOAD)                                                             \
  {                                                                               \
    const VecNt b0 = LOAD(B + k);                                                 \
    const VecNt b1 = NB > 1 ? LOAD(B + (size_t)s.ldb + k) : nt_zero();            \
    const VecNt b2 = NB > 2 ? LOAD(B + (size_t)2 * s.ldb + k) : nt_zero();        \
    const VecNt b3 = NB > 3 ? LOAD(B + (size_t)3 * s.ldb + k) : nt_zero();        \
    NT_ROW(0, LOAD) NT_ROW(1, LOAD) NT_ROW(2, LOAD) NT_ROW(3, LOAD)               \
  }

template <int MB, int NB, bool PF>
static void nt_tile(const NtShape& s, const float* A, const float* B, const float* ahead, float* C) {
  static_assert(MB >= 1 && MB <= 4 && NB >= 1 && NB <= kNtCols, "tile shape");
  VecNt c00 = nt_zero(), c01 = nt_zero(), c02 = nt_zero(), c03 = nt_zero();
  VecNt c10 = nt_zero(), c11 = nt_zero(), c12 = nt_zero(), c13 = nt_zero();
  VecNt c20 = nt_zero(), c21 = nt_zero(), c22 = nt_zero(), c23 = nt_zero();
  VecNt c30 = nt_zero(), c31 = nt_zero(), c32 = nt_zero(), c33 = nt_zero();
  const int K = s.K, K0 = K - K % kNtLanes;
  int k = 0;
  for (; k < K0; k += kNtLanes) {
    if (PF)
      for (int j = 0; j < NB; j++) _mm_prefetch((const char*)(ahead + (size_t)j * s.ldb + k), _MM_HINT_T0);
#define NT_LOAD(p) nt_load(p)
    NT_STEP(NT_LOAD)
#undef NT_LOAD
  }
  if (k < K) {  // the last K % kNtLanes: zeros past them add nothing to any lane
    const MaskNt m = nt_mask(K - k);
#define NT_LOAD(p) nt_load_tail(p, m)
    NT_STEP(NT_LOAD)
#undef NT_LOAD
  }
#undef NT_STEP
#undef NT_ROW
#undef NT_FMA
  const VecNt acc[4][kNtCols] = {
      {c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}};
  const __m128 va = _mm_set1_ps(s.alpha), vb = _mm_set1_ps(s.beta);
  for (int i = 0; i < MB; i++) {
    __m128 r = _mm_mul_ps(va, nt_sum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    float* c = C + (size_t)i * s.ldc;
    if (NB == kNtCols) {
      if (s.beta != 0.0f) r = nt_axpy(vb, _mm_loadu_ps(c), r);  // beta 0 never reads C
      _mm_storeu_ps(c, r);
    } else {  // the last columns: the same arithmetic through a scratch row
      alignas(16) float t[kNtCols] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (s.beta != 0.0f) {
        for (int j = 0; j < NB; j++) t[j] = c[j];
        r = nt_axpy(vb, _mm_load_ps(t), r);
      }
      _mm_store_ps(t, r);
      for (int j = 0; j < NB; j++) c[j] = t[j];
    }
  }
}

// One row of A times 8 weight rows (two tiles' columns), for a product of one row (a decode step at
// batch 1): nt_tile<1, 4> has only four accumulator chains, too few to cover the FMA latency. Each
// element goes through nt_tile's arithmetic (the same FMA chain over K, the same nt_sum4 tree and
// output), so its bits are those of any tile. No prefetch: measured slower (its loads compete with
// the eight streams' own).
static void nt_row8(const NtShape& s, const float* A, const float* B, float* C) {
  VecNt c0 = nt_zero(), c1 = nt_zero(), c2 = nt_zero(), c3 = nt_zero();
  VecNt c4 = nt_zero(), c5 = nt_zero(), c6 = nt_zero(), c7 = nt_zero();
  const int K = s.K, K0 = K - K % kNtLanes;
  const size_t ldb = s.ldb;
#define NT_ROW8(LOAD)                           \
  {                                             \
    const VecNt a = LOAD(A + k);                \
    c0 = nt_fma(a, LOAD(B + k), c0);            \
    c1 = nt_fma(a, LOAD(B + ldb + k), c1);      \
    c2 = nt_fma(a, LOAD(B + 2 * ldb + k), c2);  \
    c3 = nt_fma(a, LOAD(B + 3 * ldb + k), c3);  \
    c4 = nt_fma(a, LOAD(B + 4 * ldb + k), c4);  \
    c5 = nt_fma(a, LOAD(B + 5 * ldb + k), c5);  \
    c6 = nt_fma(a, LOAD(B + 6 * ldb + k), c6);  \
    c7 = nt_fma(a, LOAD(B + 7 * ldb + k), c7);  \
  }
  int k = 0;
  for (; k < K0; k += kNtLanes) {
#define NT_LOAD(p) nt_load(p)
    NT_ROW8(NT_LOAD)
#undef NT_LOAD
  }
  if (k < K) {
    const MaskNt m = nt_mask(K - k);
#define NT_LOAD(p) nt_load_tail(p, m)
    NT_ROW8(NT_LOAD)
#undef NT_LOAD
  }
#undef NT_ROW8
  const __m128 va = _mm_set1_ps(s.alpha), vb = _mm_set1_ps(s.beta);
  __m128 r0 = _mm_mul_ps(va, nt_sum4(c0, c1, c2, c3)), r1 = _mm_mul_ps(va, nt_sum4(c4, c5, c6, c7));
  if (s.beta != 0.0f) {
    r0 = nt_axpy(vb, _mm_loadu_ps(C), r0);
    r1 = nt_axpy(vb, _mm_loadu_ps(C + 4), r1);
  }
  _mm_storeu_ps(C, r0);
  _mm_storeu_ps(C + 4, r1);
}

using NtTile = void (*)(const NtShape&, const float*, const float*, const float*, float*);

// the tile kernel for mb (<= MB) rows and nb (<= kNtCols) columns
template <bool PF, int MB = kNtRows>
static NtTile nt_tile_for(int mb, int nb) {
  if constexpr (MB > 1) {
    if (mb < MB) return nt_tile_for<PF, MB - 1>(mb, nb);
  }
  switch (nb) {
    case 1: return nt_tile<MB, 1, PF>;
    case 2: return nt_tile<MB, 2, PF>;
    case 3: return nt_tile<MB, 3, PF>;
    default: return nt_tile<MB, 4, PF>;
  }
}

bool gemm_nt_rows(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                  float beta, float* C, int ldc) {
  const NtShape s{K, lda, ldb, ldc, alpha, beta};
  int j0 = 0;
  if (M == 1)
    for (const int w = 2 * kNtCols; j0 + w <= N; j0 += w)
      nt_row8(s, A, B + (size_t)j0 * ldb, C + j0);
  // weight tile outer: its rows stay in L1 while every row of A passes over them
  for (; j0 < N; j0 += kNtCols) {
    const int nb = std::min(kNtCols, N - j0);
    const float* b = B + (size_t)j0 * ldb;
    // rows past the end prefetch the last tile again (harmless, and no address outside B)
    const float* ahead = B + (size_t)std::min(j0 + kNtAhead * kNtCols, N - nb) * ldb;
    for (int i0 = 0; i0 < M; i0 += kNtRows) {
      const int mb = std::min(kNtRows, M - i0);
      const NtTile tile = i0 == 0 ? nt_tile_for<true>(mb, nb) : nt_tile_for<false>(mb, nb);
      tile(s, A + (size_t)i0 * lda, b, ahead, C + (size_t)i0 * ldc + j0);
    }
  }
  return true;
}
#else
bool gemm_nt_rows(int, int, int, float, const float*, int, const float*, int, float, float*, int) {
  return false;
}
#endif

// One BLAS call (or the portable kernel) on the calling thread: a block of gemm_fp32's split.
static void gemm_serial(bool transA, bool transB, int M, int N, int K, float alpha, const float* A,
                        int lda, const float* B, int ldb, float beta, float* C, int ldc) {
#if MASO_BLAS_ID == 1 || MASO_BLAS_ID == 2
  if (M == 1) {
    // one row (a decode step at batch 1): a GEMV reads B once, where a GEMM would first copy it
    // into packed panels — twice the memory traffic of a step that is all memory traffic
    const int incx = transA ? lda : 1;
    if (beta == 0.0f) std::memset(C, 0, sizeof(float) * N);  // beta 0 must not read C (NaN * 0)
    const float b = beta == 0.0f ? 1.0f : beta;
    if (transB) cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, alpha, B, ldb, A, incx, b, C, 1);
    else cblas_sgemv(CblasRowMajor, CblasTrans, K, N, alpha, B, ldb, A, incx, b, C, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
  gemm_naive(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

// Our OpenMP pool is the only thread pool: the BLAS runs single-threaded (set_threads) and a large
// GEMM is cut into blocks of GEMM_BLOCK rows or columns of C, one BLAS call each, shared out over
// the pool. The blocks depend on the shape only, never on the thread count, so every element of C
// is summed in the same order on 1 thread or 16.
static const int GEMM_BLOCK = 256;
static const int64_t GEMM_SPLIT_MIN = 1 << 22;  // multiply-adds; below it one call is cheaper
// A B^T with 2..NT_ROWS_MAX rows of A (a decode step: one row per sequence, and the sampler
// decodes up to 64 at once) runs in gemm_nt_rows, from NT_K_MIN on (below it the reductions cost
// more than the FMAs). The BLAS packs all of B on every call, so at few rows it is slower, and at
// 64 rows with B in cache the two run level. Training's products have more rows: BLAS as before.
static const int NT_ROWS_MAX = 64;
static const int NT_K_MIN = 48;

#ifdef MASO_GEMM_NT_ROWS
#ifdef MASO_GEMM_NT_SSE
static const bool kNtFast = false;
#else
static const bool kNtFast = true;  // faster than the BLAS at few rows
#endif
// From GEMM_SPLIT_MIN multiply-adds the threads take equal runs of whole column tiles. The sums
// depend on K only, so any cut, and so any thread count, gives the same bits.
static void gemm_nt_split(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                          int ldb, float beta, float* C, int ldc) {
  const int tiles = (N + kNtCols - 1) / kNtCols;
  // a small product on the calling thread, outside any parallel region (entering one costs a
  // decode step's small products more than their arithmetic)
  if ((int64_t)M * N * K < GEMM_SPLIT_MIN || tiles == 1) {
    gemm_nt_rows(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#pragma omp parallel
  {
    int t = 0, T = 1;
#ifdef _OPENMP
    t = omp_get_thread_num(), T = omp_get_num_threads();
#endif
    const int j0 = std::min(N, (int)((int64_t)tiles * t / T) * kNtCols);
    const int j1 = std::min(N, (int)((int64_t)tiles * (t + 1) / T) * kNtCols);
    if (j1 > j0) gemm_nt_rows(M, j1 - j0, K, alpha, A, lda, B + (size_t)j0 * ldb, ldb, beta, C + j0, ldc);
  }
}
#endif

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc) {
  if (get_precision() == 1 && gemm_bf16(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  gemm_fp32(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_fp32(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
    return;
  }
#ifdef MASO_GEMM_NT_ROWS
  // The sampler's products against weights (invariant_rows): every M and K here, so a row's bits
  // depend on K only, never on how many rows share its batch or prefill. Elsewhere the BLAS (sgemv
  // at one row, sgemm blocked by M) sums a row in an order that changes with M.
  // A long prefill goes NT_ROWS_MAX rows at a time, whose A stays in cache while the weight
  // streams past (all rows at once re-read A from memory for every weight tile: 1.3x the BLAS time
  // at 512 rows; in chunks about the BLAS time).
  if (!transA && transB && invariant_rows()) {
    for (int i0 = 0; i0 < M; i0 += NT_ROWS_MAX)
      gemm_nt_split(std::min(NT_ROWS_MAX, M - i0), N, K, alpha, A + (size_t)i0 * lda, lda, B, ldb, beta, C + (size_t)i0 * ldc, ldc);
    return;
  }
  if (kNtFast && !transA && transB && M >= 2 && M <= NT_ROWS_MAX && K >= NT_K_MIN)
    return gemm_nt_split(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
  const bool split = (int64_t)M * N * K >= GEMM_SPLIT_MIN && (M > GEMM_BLOCK || N > GEMM_BLOCK);
  if (!split) return gemm_serial(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (N >= M) {
    const int blocks = (N + GEMM_BLOCK - 1) / GEMM_BLOCK;
#pragma omp parallel for schedule(dynamic, 1)
    for (int bj = 0; bj < blocks; bj++) {
      const int j0 = bj * GEMM_BLOCK, n = std::min(GEMM_BLOCK, N - j0);
      const float* b = transB ? B + (size_t)j0 * ldb : B + j0;
      gemm_serial(transA, transB, M, n, K, alpha, A, lda, b, ldb, beta, C + j0, ldc);
    }
  } else {
    const int blocks = (M + GEMM_BLOCK - 1) / GEMM_BLOCK;
#pragma omp parallel for schedule(dynamic, 1)
    for (int bi = 0; bi < blocks; bi++) {
      const int i0 = bi * GEMM_BLOCK, m = std::min(GEMM_BLOCK, M - i0);
      const float* a = transA ? A + i0 : A + (size_t)i0 * lda;
      gemm_serial(transA, transB, m, N, K, alpha, a, lda, B, ldb, beta, C + (size_t)i0 * ldc, ldc);
    }
  }
}

static void add_bias(float* out, const float* bias, int N, int OC) {
#pragma omp parallel for schedule(static) if (pays((int64_t)N * OC))
  for (int n = 0; n < N; n++) {
    float* o = out + (size_t)n * OC;
#pragma omp simd
    for (int j = 0; j < OC; j++) o[j] += bias[j];
  }
}

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N,
                    int IC, int OC, bool accumulate) {
  WeightOperand w(weight);
  gemm(false, true, N, OC, IC, 1.0f, inp, IC, weight, IC, accumulate ? 1.0f : 0.0f, out, OC);
  if (bias) add_bias(out, bias, N, OC);
}

void matmul_forward_parts(const LinearPart* parts, int count, const float* inp, int N, int IC) {
  if (get_precision() == 1 && gemm_bf16_parts(N, IC, inp, parts, count)) {
    for (int p = 0; p < count; p++)
      if (parts[p].bias) add_bias(parts[p].out, parts[p].bias, N, parts[p].OC);
    return;
  }
  for (int p = 0; p < count; p++)
    matmul_forward(parts[p].out, inp, parts[p].weight, parts[p].bias, N, IC, parts[p].OC, false);
}

// The A products run as one parts product, as the base products of the same input do; each part
// then takes the steps matmul_forward and scale would take one call at a time, so the bits are those
// of the separate calls. One call instead of three per part: a small model's decode step made
// hundreds of these products of a few microseconds, each paying the crossing from JavaScript.
void lora_forward_parts(const LoraPart* parts, int count, const float* inp, int N, int IC, int R, float s) {
  if (N <= 0 || count <= 0 || count > kMaxParts) return;
  LinearPart down[kMaxParts];
  for (int p = 0; p < count; p++) down[p] = {parts[p].u, parts[p].A, nullptr, R};
  matmul_forward_parts(down, count, inp, N, IC);
  for (int p = 0; p < count; p++) {
    scale(parts[p].u, s, (int64_t)N * R);
    matmul_forward(parts[p].out, parts[p].u, parts[p].B, nullptr, N, R, parts[p].OC, true);
  }
}

void matmul_forward_naive(float* out, const float* inp, const float* weight, const float* bias,
                          int N, int IC, int OC, bool accumulate) {
  gemm_naive(false, true, N, OC, IC, 1.0f, inp, IC, weight, IC, accumulate ? 1.0f : 0.0f, out, OC);
  if (bias) add_bias(out, bias, N, OC);
}

// dout as bf16 for both products of a backward, which read the same stored (N, OC) matrix: one
// conversion instead of one per product (at 512 rows of gate/up, 30 MB of traffic a call). Apart
// from gemm_bf16's scratch, which a product that falls back would reuse. Null where the products
// do not run in bf16, or memory runs out.
static const uint16_t* dout_bits(const float* dout, int N, int OC) {
  if (get_precision() != 1 || !has_onednn()) return nullptr;
  static thread_local std::vector<uint16_t> bits;
  try {
    if (bits.size() < (size_t)N * OC) bits.resize((size_t)N * OC);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  pack_bf16(bits.data(), dout, N, OC, OC);
  return bits.data();
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int IC, int OC) {
  // each product from the bits is the one gemm() would run on its own conversion of dout
  const uint16_t* bits = dinp && dweight ? dout_bits(dout, N, OC) : nullptr;
  // dinp (N,IC) += dout (N,OC) @ weight (OC,IC)
  if (dinp) {
    WeightOperand w(weight);
    if (!bits || !gemm_bf16_a(false, false, N, IC, OC, 1.0f, bits, OC, weight, IC, 1.0f, dinp, IC))
      gemm(false, false, N, IC, OC, 1.0f, dout, OC, weight, IC, 1.0f, dinp, IC);
  }
  // dweight (OC,IC) += dout^T (OC,N) @ inp (N,IC)
  if (dweight && (!bits || !gemm_bf16_a(true, false, OC, IC, N, 1.0f, bits, OC, inp, IC, 1.0f, dweight, IC)))
    gemm(true, false, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
  if (dbias) {
#pragma omp parallel for schedule(static) if (pays((int64_t)N * OC))
    for (int j = 0; j < OC; j++) {
      float s = 0.0f;
      for (int n = 0; n < N; n++) s += dout[(size_t)n * OC + j];
      dbias[j] += s;
    }
  }
}

}  // namespace maso
