// LM head fused with the per-token quantities RL needs: log-prob of the given next token and the
// entropy of the distribution. Rows are processed in chunks so a (M,V) logits matrix is never
// required (V = 151936 for Qwen); backward recomputes a chunk's logits unless they were kept.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels.h"
#include "vec.h"

namespace maso {

// Rows per chunk. Kept logits need no scratch: every row in one chunk, so the forward reads wte
// once and dwte takes a single read-modify-write pass. Otherwise the chunk's logits live in ~128 MB
// of scratch, in chunks of equal size, so the last one is not a sliver: each is a full pass over
// dwte (544 MB for Qwen's vocabulary) and wants as many rows (the product's K) as it can get.
static int rows_per_chunk(int M, int V, bool kept) {
  if (M <= 0) return 1;
  if (kept) return M;
  long long cap = (32LL << 20) / (V > 0 ? V : 1);
  if (cap < 64) cap = 64;
  const long long chunks = (M + cap - 1) / cap;
  return (int)((M + chunks - 1) / chunks);
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

// The chunk scratch of a calling thread (forward and backward), kept between calls and never
// zeroed: the product writes every element before anything reads it (beta 0 never reads C). A
// fresh zeroed buffer of up to 128 MB per call cost a memset and a page fault per 4 KB, a quarter
// of a log-prob forward of a small model on a VM. Bounded by rows_per_chunk: at most ~128 MB per
// thread that scores without keeping logits (the trainer's main thread, a worker's).
static float* chunk_scratch(size_t n) {
  static thread_local std::unique_ptr<float[]> kept;
  static thread_local size_t size = 0;
  if (n > size) {
    kept.reset(new float[n]);
    advise_huge_pages(kept.get(), n * sizeof(float));
    size = n;
  }
  return kept.get();
}

void logits_forward(float* logp, float* entropy, float* lse, float* logits, const float* hidden,
                    const float* wte, const int32_t* targets, int M, int C, int V, float invTemp) {
  const int chunk = rows_per_chunk(M, V, logits != nullptr);
  float* scratch = logits ? nullptr : chunk_scratch((size_t)chunk * V);
  for (int r0 = 0; r0 < M; r0 += chunk) {
    int rows = M - r0 < chunk ? M - r0 : chunk;
    float* z = logits ? logits + (size_t)r0 * V : scratch;
    {
      WeightOperand w(wte);
      gemm(false, true, rows, V, C, invTemp, hidden + (size_t)r0 * C, C, wte, C, 0.0f, z, V);
    }
    softmax_stats(z, targets + r0, logp + r0, entropy + r0, lse + r0, rows, V);
  }
}

namespace {

// A chunk's gradient w.r.t. its logits, written over the logits: fp32 rows (ld V), or under a bf16
// precision a dense (rows, V) bf16 matrix laid over the start of the same memory, so the two
// products read a quarter of the bytes and convert nothing.
struct GradRows {
  float* z;
  int rows, V;
  bool bits;
  const uint16_t* a() const { return reinterpret_cast<const uint16_t*>(z); }
  // back to fp32 rows in place, for a product the bf16 path refused. Row r's fp32 values cover the
  // bf16 rows 2r and 2r + 1: rows run from the last and values from the end of each row, so every
  // bf16 value is read before anything is written over it.
  void widen() {
    unsigned char* base = reinterpret_cast<unsigned char*>(z);
    for (int r = rows - 1; r >= 0; r--)
      for (int j = V - 1; j >= 0; j--) {
        const size_t e = (size_t)r * V + j;
        uint16_t b;
        std::memcpy(&b, base + 2 * e, 2);
        const uint32_t u = (uint32_t)b << 16;
        std::memcpy(base + 4 * e, &u, 4);
      }
    bits = false;
  }
};

// dz_j = dlogp (1[j=t] - p_j) - dH p_j (log p_j + H), then the chain rule through invTemp; d may be z
inline void grad_row(float* d, const float* z, int V, float gl, float ge, float l, float H, float invTemp, int target) {
#pragma omp simd
  for (int j = 0; j < V; j++) {
    const float lp = z[j] - l;
    const float p = exp_nonpos(lp);
    d[j] = (-gl * p - ge * p * (lp + H)) * invTemp;
  }
  d[target] += gl * invTemp;
}

// dz over the chunk's rows [r0, r0 + g.rows) of the batch, in place of their logits. Row r's bf16
// values land on the fp32 rows near r/2, so with bits the rows run in waves [h, 2h): a wave writes
// only over rows that earlier waves have read in full (each row goes through an fp32 copy first).
void grad_rows(GradRows& g, int r0, const float* dlogp, const float* dentropy, const float* lse,
               const float* entropy, const int32_t* targets, float invTemp, std::vector<float>& rowbuf) {
  const int V = g.V;
  for (int lo = 0, hi = g.bits ? 1 : g.rows; lo < g.rows; lo = hi, hi = std::min(g.rows, 2 * hi)) {
#pragma omp parallel if (pays((int64_t)(hi - lo) * V))
    {
      int me = 0;
#ifdef _OPENMP
      me = omp_get_thread_num();
#endif
      float* row = g.bits ? rowbuf.data() + (size_t)me * V : nullptr;
#pragma omp for schedule(static)
      for (int r = lo; r < hi; r++) {
        const int m = r0 + r;
        float* zr = g.z + (size_t)r * V;
        const float gl = dlogp ? dlogp[m] : 0.0f, ge = dentropy ? dentropy[m] : 0.0f;
        grad_row(row ? row : zr, zr, V, gl, ge, lse[m], entropy[m], invTemp, targets[m]);
        if (row) to_bf16(reinterpret_cast<uint16_t*>(g.z) + (size_t)r * V, row, V);
      }
    }
  }
}

// dhidden (rows,C) += dz (rows,V) @ wte (V,C) from the bits, over slices of the vocabulary: oneDNN
// ran one product over all of V at half the speed. The slices are views of wte's one cached bf16
// copy. Returns how much of the vocabulary it added (V, unless the bf16 path refused a product).
constexpr int kVocabSlice = 8192;
int hidden_grad_bits(const GradRows& g, float* dh, const float* wte, int C) {
  const Bf16Copy w = cached_bf16(wte, g.V, C, C);
  if (!w) {
    WeightOperand op(wte);
    return gemm_bf16_a(false, false, g.rows, C, g.V, 1.0f, g.a(), g.V, wte, C, 1.0f, dh, C) ? g.V : 0;
  }
  for (int k0 = 0; k0 < g.V; k0 += kVocabSlice) {
    const int k = std::min(kVocabSlice, g.V - k0);
    if (!gemm_bf16_bits(false, false, g.rows, C, k, 1.0f, g.a() + k0, g.V, w->data() + (size_t)k0 * C, 1.0f, dh, C))
      return k0;
  }
  return g.V;
}

}  // namespace

void logits_backward(float* dhidden, float* dwte, const float* dlogp, const float* dentropy,
                     float* logits, const float* lse, const float* entropy,
                     const float* hidden, const float* wte, const int32_t* targets, int M, int C,
                     int V, float invTemp) {
  const int chunk = rows_per_chunk(M, V, logits != nullptr);
  float* zbuf = logits ? nullptr : chunk_scratch((size_t)chunk * V);
  const bool bits = get_precision() == 1 && has_onednn();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  std::vector<float> rowbuf(bits ? (size_t)threads * V : 0);  // each thread's fp32 gradient row
  for (int r0 = 0; r0 < M; r0 += chunk) {
    const int rows = M - r0 < chunk ? M - r0 : chunk;
    float* z = logits ? logits + (size_t)r0 * V : zbuf;
    if (!logits) {
      WeightOperand w(wte);
      gemm(false, true, rows, V, C, invTemp, hidden + (size_t)r0 * C, C, wte, C, 0.0f, z, V);
    }
    GradRows g{z, rows, V, bits};
    grad_rows(g, r0, dlogp, dentropy, lse, entropy, targets, invTemp, rowbuf);
    // dhidden (rows,C) += dz (rows,V) @ wte (V,C) ; dwte (V,C) += dz^T (V,rows) @ hidden (rows,C)
    float* dh = dhidden + (size_t)r0 * C;
    const float* h = hidden + (size_t)r0 * C;
    const int added = g.bits ? hidden_grad_bits(g, dh, wte, C) : 0;
    if (added < V) {  // the rest in fp32 (the whole product at fp32 precision)
      if (g.bits) g.widen();
      Fp32Gemms fp32;
      gemm(false, false, rows, C, V - added, 1.0f, z + added, V, wte + (size_t)added * C, C, 1.0f, dh, C);
    }
    if (!dwte) continue;
    if (g.bits && gemm_bf16_a(true, false, V, C, rows, 1.0f, g.a(), V, h, C, 1.0f, dwte, C)) continue;
    if (g.bits) g.widen();
    Fp32Gemms fp32;
    gemm(true, false, V, C, rows, 1.0f, z, V, h, C, 1.0f, dwte, C);
  }
}

}  // namespace maso
