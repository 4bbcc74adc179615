// Causal grouped-query attention over packed sequences: a token only attends to earlier tokens of
// its own sequence, so padding never exists and no compute crosses a sequence boundary.
// Forward keeps only the row log-sum-exp (N,NH); backward recomputes probabilities from it
// (flash-attention style), so saved memory stays O(N) instead of O(T^2) per head.
// The fast path runs each (sequence, head) as products over blocks of query rows, in maso's own
// summation order (native/ordered_gemm.h), skipping the masked upper triangle tile by tile, and
// vectorised softmax loops (exp_nonpos, within 1 ulp of std::exp); the naive loops below stay as
// the reference.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels.h"
#include "ordered_gemm.h"
#include "vec.h"

namespace maso {


void attention_forward_naive(float* out, float* lse, const float* q, const float* k, const float* v,
                       const int32_t* starts, int B, int NH, int KVH, int HS) {
  const int group = NH / KVH;
  const float sc = 1.0f / std::sqrt((float)HS);
  // one task per (sequence, query head); rows of long sequences dominate, so schedule dynamically
#pragma omp parallel
  {
    std::vector<float> p;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int b = 0; b < B; b++) {
      for (int h = 0; h < NH; h++) {
        const int s0 = starts[b], s1 = starts[b + 1];
        const int kh = h / group;
        if ((int)p.size() < s1 - s0) p.resize(s1 - s0);
        for (int i = s0; i < s1; i++) {
          const float* qi = q + ((size_t)i * NH + h) * HS;
          float mx = -INFINITY;
          for (int j = s0; j <= i; j++) {
            float s = sc * dot(qi, k + ((size_t)j * KVH + kh) * HS, HS);
            p[j - s0] = s;
            mx = s > mx ? s : mx;
          }
          float sum = 0.0f;
          for (int j = s0; j <= i; j++) {
            float e = std::exp(p[j - s0] - mx);
            p[j - s0] = e;
            sum += e;
          }
          float* oi = out + ((size_t)i * NH + h) * HS;
          for (int d = 0; d < HS; d++) oi[d] = 0.0f;
          float inv = 1.0f / sum;
          for (int j = s0; j <= i; j++) axpy_small(oi, v + ((size_t)j * KVH + kh) * HS, p[j - s0] * inv, HS);
          lse[(size_t)i * NH + h] = mx + std::log(sum);
        }
      }
    }
  }
}

void attention_backward_naive(float* dq, float* dk, float* dv, const float* dout, const float* out,
                        const float* lse, const float* q, const float* k, const float* v,
                        const int32_t* starts, int B, int NH, int KVH, int HS) {
  const int group = NH / KVH;
  const float sc = 1.0f / std::sqrt((float)HS);
  // one task per (sequence, kv head): every write to dk/dv of that head stays in one task
#pragma omp parallel for schedule(dynamic, 1) collapse(2)
  for (int b = 0; b < B; b++) {
    for (int kh = 0; kh < KVH; kh++) {
      const int s0 = starts[b], s1 = starts[b + 1];
      for (int h = kh * group; h < (kh + 1) * group; h++) {
        for (int i = s0; i < s1; i++) {
          const size_t qi_off = ((size_t)i * NH + h) * HS;
          const float* qi = q + qi_off;
          const float* doi = dout + qi_off;
          float* dqi = dq + qi_off;
          const float D = dot(doi, out + qi_off, HS);
          const float l = lse[(size_t)i * NH + h];
          for (int j = s0; j <= i; j++) {
            const size_t kj_off = ((size_t)j * KVH + kh) * HS;
            const float p = std::exp(sc * dot(qi, k + kj_off, HS) - l);
            const float dp = dot(doi, v + kj_off, HS);
            const float ds = p * (dp - D) * sc;
            axpy_small(dqi, k + kj_off, ds, HS);
            axpy_small(dk + kj_off, qi, ds, HS);
            axpy_small(dv + kj_off, doi, p, HS);
          }
        }
      }
    }
  }
}

// Query rows per block: a block of rows [i0, i1) only needs keys [s0, i1).
static const int ROW_BLOCK = 128;

// Score-matrix work of a packed batch (sum of T^2 over sequences, times heads and head size).
static int64_t attention_work(const int32_t* starts, int B, int NH, int HS) {
  int64_t w = 0;
  for (int b = 0; b < B; b++) {
    const int64_t T = starts[b + 1] - starts[b];
    w += T * T;
  }
  return w * NH * HS;
}

// xt (HS, ldt) = the head's rows x (T, HS, rows ld apart) transposed, columns T..ldt zero: the B
// operand of a product against keys or values, read a whole vector at a time.
static void transpose_head(std::vector<float>& xt, const float* x, int T, int HS, int ld, int ldt) {
  xt.assign((size_t)HS * ldt, 0.0f);
  for (int j = 0; j < T; j++)
    for (int d = 0; d < HS; d++) xt[(size_t)d * ldt + j] = x[(size_t)j * ld + d];
}

static int padded_len(int T) { return (T + ordered::W - 1) / ordered::W * ordered::W; }

// A block's scores, rows x cols = alpha · X Yᵀ (Yᵀ given as yt, ldt): row r of the block (query
// i0 + r) is read up to key i0 + r only, so a row tile stops at its last row's key.
static void block_scores(float* S, int rows, int cols, int i0, float alpha, const float* X, int ldx,
                         const std::vector<float>& yt, int ldt, int HS) {
  const ordered::Product p{rows, cols, alpha, X, (size_t)ldx, 1, yt.data(), (size_t)ldt, true, false, S, (size_t)cols};
  ordered::gemm(p, [&](int, int r1) { return ordered::Limits{0, HS, std::min(cols, i0 + r1)}; });
}

// out (rows, HS) (+)= P Y over a block's probabilities P (rows, cols), zero past each row's key.
static void block_rows_times(float* out, int ldo, const float* P, int rows, int cols, int i0,
                             const float* Y, int ldy, int HS, bool accumulate) {
  const ordered::Product p{rows, HS, 1.0f, P, (size_t)cols, 1, Y, (size_t)ldy, false, accumulate, out, (size_t)ldo};
  ordered::gemm(p, [&](int, int r1) { return ordered::Limits{0, std::min(cols, i0 + r1), HS}; });
}

// out (cols, HS) += Pᵀ Y: key c takes rows r >= c - i0 only (the others are masked to zero).
static void block_cols_times(float* out, int ldo, const float* P, int rows, int cols, int i0,
                             const float* Y, int ldy, int HS) {
  const ordered::Product p{cols, HS, 1.0f, P, 1, (size_t)cols, Y, (size_t)ldy, false, true, out, (size_t)ldo};
  ordered::gemm(p, [&](int c0, int) { return ordered::Limits{std::max(0, c0 - i0), rows, HS}; });
}

// One task per (sequence, query head), its products on the task's thread (native/ordered_gemm.h).
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const int32_t* starts, int B, int NH, int KVH, int HS) {
  const int group = NH / KVH;
  const float sc = 1.0f / std::sqrt((float)HS);
  const int ldq = NH * HS, ldk = KVH * HS;
#pragma omp parallel if (pays(attention_work(starts, B, NH, HS)))
  {
    std::vector<float> S, Kt;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int b = 0; b < B; b++) {
      for (int h = 0; h < NH; h++) {
        const int s0 = starts[b], T = starts[b + 1] - s0;
        if (T == 0) continue;
        if (S.size() < (size_t)ROW_BLOCK * T) S.resize((size_t)ROW_BLOCK * T);
        const int kh = h / group, ldt = padded_len(T);
        transpose_head(Kt, k + (size_t)s0 * ldk + kh * HS, T, HS, ldk, ldt);
        const float* Vh = v + (size_t)s0 * ldk + kh * HS;
        for (int i0 = 0; i0 < T; i0 += ROW_BLOCK) {
          const int rows = std::min(ROW_BLOCK, T - i0), cols = i0 + rows;
          const float* Q = q + (size_t)(s0 + i0) * ldq + h * HS;
          block_scores(S.data(), rows, cols, i0, sc, Q, ldq, Kt, ldt, HS);
          for (int r = 0; r < rows; r++) {
            float* sr = S.data() + (size_t)r * cols;
            const int valid = i0 + r + 1;
            float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
            for (int j = 0; j < valid; j++) mx = sr[j] > mx ? sr[j] : mx;
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int j = 0; j < valid; j++) {
              sr[j] = exp_nonpos(sr[j] - mx);
              sum += sr[j];
            }
            const float inv = 1.0f / sum;
#pragma omp simd
            for (int j = 0; j < valid; j++) sr[j] *= inv;
            for (int j = valid; j < cols; j++) sr[j] = 0.0f;
            lse[(size_t)(s0 + i0 + r) * NH + h] = mx + std::log(sum);
          }
          block_rows_times(out + (size_t)(s0 + i0) * ldq + h * HS, ldq, S.data(), rows, cols, i0, Vh, ldk, HS, false);
        }
      }
    }
  }
}

// One task per (sequence, kv head): every write to that head's dk/dv stays in one task.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out,
                        const float* lse, const float* q, const float* k, const float* v,
                        const int32_t* starts, int B, int NH, int KVH, int HS) {
  const int group = NH / KVH;
  const float sc = 1.0f / std::sqrt((float)HS);
  const int ldq = NH * HS, ldk = KVH * HS;
#pragma omp parallel if (pays(attention_work(starts, B, NH, HS)))
  {
    std::vector<float> P, dS, Kt, Vt;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int b = 0; b < B; b++) {
      for (int kh = 0; kh < KVH; kh++) {
        const int s0 = starts[b], T = starts[b + 1] - s0;
        if (T == 0) continue;
        if (P.size() < (size_t)ROW_BLOCK * T) {
          P.resize((size_t)ROW_BLOCK * T);
          dS.resize((size_t)ROW_BLOCK * T);
        }
        const float* K = k + (size_t)s0 * ldk + kh * HS;
        const float* Vh = v + (size_t)s0 * ldk + kh * HS;
        const int ldt = padded_len(T);
        transpose_head(Kt, K, T, HS, ldk, ldt);
        transpose_head(Vt, Vh, T, HS, ldk, ldt);
        float* dK = dk + (size_t)s0 * ldk + kh * HS;
        float* dV = dv + (size_t)s0 * ldk + kh * HS;
        for (int h = kh * group; h < (kh + 1) * group; h++) {
          for (int i0 = 0; i0 < T; i0 += ROW_BLOCK) {
            const int rows = std::min(ROW_BLOCK, T - i0), cols = i0 + rows;
            const size_t qoff = (size_t)(s0 + i0) * ldq + h * HS;
            // P recomputed with the forward's scores (the same kernel: the same bits), and dP = dO Vᵀ
            block_scores(P.data(), rows, cols, i0, sc, q + qoff, ldq, Kt, ldt, HS);
            block_scores(dS.data(), rows, cols, i0, 1.0f, dout + qoff, ldq, Vt, ldt, HS);
            for (int r = 0; r < rows; r++) {
              float* pr = P.data() + (size_t)r * cols;
              float* dr = dS.data() + (size_t)r * cols;
              const int valid = i0 + r + 1;
              const size_t row = (size_t)(s0 + i0 + r);
              const float l = lse[row * NH + h];
              const float D = dot(dout + row * ldq + h * HS, out + row * ldq + h * HS, HS);
              // pr[j] <= l, the row's log-sum-exp over the same scores
#pragma omp simd
              for (int j = 0; j < valid; j++) {
                pr[j] = exp_nonpos(pr[j] - l);
                dr[j] = pr[j] * (dr[j] - D) * sc;
              }
              for (int j = valid; j < cols; j++) pr[j] = dr[j] = 0.0f;
            }
            // dQ += dS K ; dK += dSᵀ Q ; dV += Pᵀ dO
            block_rows_times(dq + qoff, ldq, dS.data(), rows, cols, i0, K, ldk, HS, true);
            block_cols_times(dK, ldk, dS.data(), rows, cols, i0, q + qoff, ldq, HS);
            block_cols_times(dV, ldk, P.data(), rows, cols, i0, dout + qoff, ldq, HS);
          }
        }
      }
    }
  }
}

}  // namespace maso
