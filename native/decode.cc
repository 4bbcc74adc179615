// Kernels of the KV-cache sampler: writing new K/V rows into a layer's block pool, and attention of
// one new query per sequence over that sequence's cached positions (paged through a block table).
// Inference only: nothing here is differentiated, so there are no backward pairs. Kernels trust
// their arguments; addon_decode.cc validates every length and index first.
//
// Shapes: B sequences in a decode step, NH/KVH query/key-value heads, HS head size, W = KVH*HS
// floats per cached position, BS positions per cache block, P blocks in a layer's pool, N rows.
// Pool layout per layer: kc, vc (P*BS, KVH, HS); position t of a sequence lives in pool row
// table[t / BS] * BS + t % BS, after k-norm and RoPE (exactly what training attention consumes).
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels.h"
#include "vec.h"

namespace maso {

// kc[slots[n]] = k[n], vc[slots[n]] = v[n] for n < N; k, v (N, W); rows of W floats
void kv_cache_write(float* kc, float* vc, const float* k, const float* v, const int32_t* slots, int N,
                    int W) {
#pragma omp parallel for schedule(static) if (pays((int64_t)N * W))
  for (int n = 0; n < N; n++) {
    std::memcpy(kc + (size_t)slots[n] * W, k + (size_t)n * W, sizeof(float) * W);
    std::memcpy(vc + (size_t)slots[n] * W, v + (size_t)n * W, sizeof(float) * W);
  }
}


// pool row of position t of a sequence whose blocks are `blocks`
static inline size_t pool_row(const int32_t* blocks, int t, int BS) {
  return (size_t)blocks[t / BS] * BS + t % BS;
}

// Reference: one (sequence, query head) at a time, the textbook softmax(q K^T / sqrt(HS)) V.
// out, q (B,NH,HS); kc, vc (P*BS,KVH,HS); table block ids, sequence b's at table[tstart[b]..);
// sequence b attends to its positions [0, lens[b]).
void attention_decode_naive(float* out, const float* q, const float* kc, const float* vc,
                            const int32_t* table, const int32_t* tstart, const int32_t* lens, int B,
                            int NH, int KVH, int HS, int BS) {
  const int group = NH / KVH, W = KVH * HS;
  const float sc = 1.0f / std::sqrt((float)HS);
  std::vector<float> p;
  for (int b = 0; b < B; b++) {
    const int T = lens[b];
    const int32_t* blocks = table + tstart[b];
    if ((int)p.size() < T) p.resize(T);
    for (int h = 0; h < NH; h++) {
      const int kh = h / group;
      const float* qh = q + ((size_t)b * NH + h) * HS;
      float mx = -INFINITY;
      for (int t = 0; t < T; t++) {
        p[t] = sc * dot(qh, kc + pool_row(blocks, t, BS) * W + kh * HS, HS);
        mx = p[t] > mx ? p[t] : mx;
      }
      float sum = 0.0f;
      for (int t = 0; t < T; t++) {
        p[t] = std::exp(p[t] - mx);
        sum += p[t];
      }
      const float inv = 1.0f / sum;
      float* o = out + ((size_t)b * NH + h) * HS;
      for (int d = 0; d < HS; d++) o[d] = 0.0f;
      for (int t = 0; t < T; t++) axpy_small(o, vc + pool_row(blocks, t, BS) * W + kh * HS, p[t] * inv, HS);
    }
  }
}

// Fast path, same arguments: one OpenMP task per (sequence, kv head), so the query heads of a GQA
// group read each cached K/V row once while it is in cache.
void attention_decode(float* out, const float* q, const float* kc, const float* vc,
                      const int32_t* table, const int32_t* tstart, const int32_t* lens, int B,
                      int NH, int KVH, int HS, int BS) {
  const int group = NH / KVH, W = KVH * HS;
  const float sc = 1.0f / std::sqrt((float)HS);
  int64_t cached = 0;  // positions read, over all sequences
  for (int b = 0; b < B; b++) cached += lens[b];
#pragma omp parallel if (pays(cached * NH * HS))
  {
    std::vector<float> s;  // (group, T) scores, then probabilities
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int b = 0; b < B; b++) {
      for (int kh = 0; kh < KVH; kh++) {
        const int T = lens[b];
        const int32_t* blocks = table + tstart[b];
        if ((int)s.size() < group * T) s.resize((size_t)group * T);
        const float* qg = q + ((size_t)b * NH + kh * group) * HS;  // (group, HS)
        for (int t = 0; t < T; t++) {
          const float* kr = kc + pool_row(blocks, t, BS) * W + kh * HS;
          for (int g = 0; g < group; g++) s[(size_t)g * T + t] = sc * dot(qg + (size_t)g * HS, kr, HS);
        }
        for (int g = 0; g < group; g++) {
          float* sg = s.data() + (size_t)g * T;
          float mx = -INFINITY;
          for (int t = 0; t < T; t++) mx = sg[t] > mx ? sg[t] : mx;
          float sum = 0.0f;
          for (int t = 0; t < T; t++) {
            sg[t] = std::exp(sg[t] - mx);
            sum += sg[t];
          }
          const float inv = 1.0f / sum;
          for (int t = 0; t < T; t++) sg[t] *= inv;
        }
        float* og = out + ((size_t)b * NH + kh * group) * HS;  // (group, HS)
        for (int i = 0; i < group * HS; i++) og[i] = 0.0f;
        for (int t = 0; t < T; t++) {
          const float* vr = vc + pool_row(blocks, t, BS) * W + kh * HS;
          for (int g = 0; g < group; g++) axpy_small(og + (size_t)g * HS, vr, s[(size_t)g * T + t], HS);
        }
      }
    }
  }
}

}  // namespace maso
