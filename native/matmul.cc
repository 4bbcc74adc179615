// GEMM dispatch and the linear layer. The naive kernel stays beside the BLAS path: it is the
// portable fallback when no CBLAS is found and the reference the fast path is tested against.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels.h"
#include "vec.h"
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

void gemm_serial(bool transA, bool transB, int M, int N, int K, float alpha, const float* A,
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
// is summed in the same order on 1 thread or 16. Kernels that already run tasks in parallel
// (attention's per-head tasks) call gemm_serial.
static const int GEMM_BLOCK = 256;
static const int64_t GEMM_SPLIT_MIN = 1 << 22;  // multiply-adds; below it one call is cheaper

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc) {
  if (get_precision() == 1 && gemm_bf16(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
    return;
  }
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

void matmul_forward_naive(float* out, const float* inp, const float* weight, const float* bias,
                          int N, int IC, int OC, bool accumulate) {
  gemm_naive(false, true, N, OC, IC, 1.0f, inp, IC, weight, IC, accumulate ? 1.0f : 0.0f, out, OC);
  if (bias) add_bias(out, bias, N, OC);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int IC, int OC) {
  // dinp (N,IC) += dout (N,OC) @ weight (OC,IC)
  if (dinp) {
    WeightOperand w(weight);
    gemm(false, false, N, IC, OC, 1.0f, dout, OC, weight, IC, 1.0f, dinp, IC);
  }
  // dweight (OC,IC) += dout^T (OC,N) @ inp (N,IC)
  if (dweight) gemm(true, false, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
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
