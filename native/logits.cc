// LM head fused with the per-token quantities RL needs: log-prob of the given next token and the
// entropy of the distribution. Rows are processed in chunks so a (M,V) logits matrix is never
// required (V = 151936 for Qwen); backward recomputes a chunk's logits unless they were kept.
#include <cmath>
#include <vector>

#include "kernels.h"
#include "vec.h"

namespace maso {

// Rows per chunk: enough that the dwte GEMM (V,C) += dz^T h gets a long K (each chunk is one full
// read-modify-write pass over dwte, 544 MB for Qwen's vocabulary), bounded to ~128 MB of scratch.
static int rows_per_chunk(int M, int V) {
  long long r = (32LL << 20) / (V > 0 ? V : 1);
  if (r < 64) r = 64;
  return (int)(r < M ? r : (M > 0 ? M : 1));
}

// z (rows,V) -> logp, entropy, lse of each row
static void softmax_stats(const float* z, const int32_t* targets, float* logp, float* entropy,
                          float* lse, int rows, int V) {
#pragma omp parallel for schedule(static) if (pays((int64_t)rows * V))
  for (int r = 0; r < rows; r++) {
    const float* zr = z + (size_t)r * V;
    const float mx = max_of(zr, V);
    double sum = 0.0, sz = 0.0;
#pragma omp simd reduction(+ : sum, sz)
    for (int j = 0; j < V; j++) {
      const float e = exp_nonpos(zr[j] - mx);  // float exp, double accumulation
      sum += e;
      sz += (double)e * zr[j];
    }
    double l = mx + std::log(sum);
    lse[r] = (float)l;
    logp[r] = (float)(zr[targets[r]] - l);
    entropy[r] = (float)(l - sz / sum);  // H = lse - E_p[z]
  }
}

void logits_forward(float* logp, float* entropy, float* lse, float* logits, const float* hidden,
                    const float* wte, const int32_t* targets, int M, int C, int V, float invTemp) {
  const int chunk = rows_per_chunk(M, V);
  std::vector<float> scratch(logits ? 0 : (size_t)chunk * V);
  for (int r0 = 0; r0 < M; r0 += chunk) {
    int rows = M - r0 < chunk ? M - r0 : chunk;
    float* z = logits ? logits + (size_t)r0 * V : scratch.data();
    {
      WeightOperand w(wte);
      gemm(false, true, rows, V, C, invTemp, hidden + (size_t)r0 * C, C, wte, C, 0.0f, z, V);
    }
    softmax_stats(z, targets + r0, logp + r0, entropy + r0, lse + r0, rows, V);
  }
}

void logits_backward(float* dhidden, float* dwte, const float* dlogp, const float* dentropy,
                     const float* logits, const float* lse, const float* entropy,
                     const float* hidden, const float* wte, const int32_t* targets, int M, int C,
                     int V, float invTemp) {
  const int chunk = rows_per_chunk(M, V);
  std::vector<float> dz((size_t)chunk * V);
  std::vector<float> zbuf(logits ? 0 : (size_t)chunk * V);
  for (int r0 = 0; r0 < M; r0 += chunk) {
    int rows = M - r0 < chunk ? M - r0 : chunk;
    const float* z;
    if (logits) {
      z = logits + (size_t)r0 * V;
    } else {
      WeightOperand w(wte);
      gemm(false, true, rows, V, C, invTemp, hidden + (size_t)r0 * C, C, wte, C, 0.0f, zbuf.data(), V);
      z = zbuf.data();
    }
    // dz_j = dlogp (1[j=t] - p_j) - dH p_j (log p_j + H), then the chain rule through invTemp
#pragma omp parallel for schedule(static) if (pays((int64_t)rows * V))
    for (int r = 0; r < rows; r++) {
      const int m = r0 + r;
      const float* zr = z + (size_t)r * V;
      float* d = dz.data() + (size_t)r * V;
      const float gl = dlogp ? dlogp[m] : 0.0f, ge = dentropy ? dentropy[m] : 0.0f;
      const float l = lse[m], H = entropy[m];
#pragma omp simd
      for (int j = 0; j < V; j++) {
        float lp = zr[j] - l;
        float p = exp_nonpos(lp);
        d[j] = (-gl * p - ge * p * (lp + H)) * invTemp;
      }
      d[targets[m]] += gl * invTemp;
    }
    // dhidden (rows,C) += dz (rows,V) @ wte (V,C) ; dwte (V,C) += dz^T (V,rows) @ hidden (rows,C)
    {
      WeightOperand w(wte);
      gemm(false, false, rows, C, V, 1.0f, dz.data(), V, wte, C, 1.0f, dhidden + (size_t)r0 * C, C);
    }
    if (dwte) gemm(true, false, V, C, rows, 1.0f, dz.data(), V, hidden + (size_t)r0 * C, C, 1.0f, dwte, C);
  }
}

}  // namespace maso
