// Kernels of the KV-cache sampler: writing new K/V rows into a layer's block pool, and attention of
// one new query per sequence over that sequence's cached positions (paged through a block table).
// Inference only: nothing here is differentiated, so there are no backward pairs. Kernels trust
// their arguments; addon_decode.cc validates every length and index first.
//
// Shapes: B sequences in a decode step, NH/KVH query/key-value heads, HS head size, W = KVH*HS
// floats per cached position, BS positions per cache block, P blocks in a layer's pool, N rows.
// Pool layout per layer: kc, vc (P*BS, KVH, HS); position t of a sequence lives in pool row
// table[t / BS] * BS + t % BS, after k-norm and RoPE (exactly what training attention consumes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

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

// ---- Fast path ----------------------------------------------------------------------------------
// One task per (sequence, kv head) handles the G = NH/KVH query heads of its GQA group, so each
// cached K/V row is read once for all of them. Scores are computed for L positions at a time: L
// accumulator vectors of per-lane partial products, folded by one transpose-and-add tree into a
// vector of L scores, instead of a horizontal reduction per dot product. The weighted sum of V
// keeps each query head's output chunk in a register over all positions.

// Vectors of L = 8 floats where the build has AVX2 and FMA (the avx2 and avx512 levels), of 4 with
// SSE2 only (the baseline x86-64 level), else plain loops. 256-bit vectors at the avx512 level too:
// the transpose-and-add tree below costs half as much on 256-bit registers as on 512-bit ones on
// CPUs that split 512-bit shuffles in two (Zen 4: 2.7 against 5.7 cycles per score), and FMAs run
// at the same rate there.
#if defined(__AVX2__) && defined(__FMA__)
#define MASO_DECODE_SIMD 1
constexpr int L = 8;
using vf = __m256;
static inline vf vzero() { return _mm256_setzero_ps(); }
static inline vf vset(float x) { return _mm256_set1_ps(x); }
static inline vf vload(const float* p) { return _mm256_loadu_ps(p); }
static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline void vstore(float* p, vf x) { _mm256_storeu_ps(p, x); }
// lane j of the result = the sum of v[j]'s lanes, added in a fixed tree (14 shuffles, 7 adds)
static inline vf vlane_sums(const vf* v) {
  vf w[4], x[2];
  for (int i = 0; i < 4; i++) {  // each 128-bit half: a0+a2 b0+b2 a1+a3 b1+b3, a = v[2i], b = v[2i+1]
    const vf a = v[2 * i], b = v[2 * i + 1];
    w[i] = _mm256_add_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
  }
  for (int i = 0; i < 2; i++) {  // half k: the half-k sums of v[4i .. 4i+3]
    const __m256d c = _mm256_castps_pd(w[2 * i]), d = _mm256_castps_pd(w[2 * i + 1]);
    x[i] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(c, d)),
                         _mm256_castpd_ps(_mm256_unpackhi_pd(c, d)));
  }
  // the low halves of x[0], x[1] plus their high halves
  return _mm256_add_ps(_mm256_permute2f128_ps(x[0], x[1], 0x20), _mm256_permute2f128_ps(x[0], x[1], 0x31));
}
#elif defined(__SSE2__)
#define MASO_DECODE_SIMD 1
constexpr int L = 4;
using vf = __m128;
static inline vf vzero() { return _mm_setzero_ps(); }
static inline vf vset(float x) { return _mm_set1_ps(x); }
static inline vf vload(const float* p) { return _mm_loadu_ps(p); }
static inline vf vadd(vf a, vf b) { return _mm_add_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm_mul_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }  // no FMA before AVX2
static inline void vstore(float* p, vf x) { _mm_storeu_ps(p, x); }
static inline vf vlane_sums(const vf* v) {  // as above, one 128-bit half
  const vf w0 = _mm_add_ps(_mm_unpacklo_ps(v[0], v[1]), _mm_unpackhi_ps(v[0], v[1]));
  const vf w1 = _mm_add_ps(_mm_unpacklo_ps(v[2], v[3]), _mm_unpackhi_ps(v[2], v[3]));
  return _mm_add_ps(_mm_movelh_ps(w0, w1), _mm_movehl_ps(w1, w0));
}
#else
#define MASO_DECODE_SIMD 0
constexpr int L = 1;
#endif

void exp_nonpos_n(float* y, const float* x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; i++) y[i] = exp_nonpos(x[i]);
}

// Score rows are padded to a multiple of kPad positions, so that the softmax loops below run in
// whole vectors of every level (up to 16 floats) with no scalar remainder; padding scores are -inf.
constexpr int kPad = 16;

// s[t] = exp(s[t] - mx) for t < Tp, where mx = max s[t] and Tp is a multiple of kPad; returns the
// sum of the new s[t]
static float softmax_numerators(float* s, int Tp) {
  Tp &= -kPad;  // tells the compiler, which then leaves out the remainder loops
  const float mx = max_of(s, Tp);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int t = 0; t < Tp; t++) {
    const float e = exp_nonpos(s[t] - mx);
    s[t] = e;
    sum += e;
  }
  return sum;
}

#if MASO_DECODE_SIMD
// s[g * Tp + t] = sc * (q_g . k_t) for g < G and t < T rounded up to a multiple of L, where
// q_g = qg + g * HS, k_t = kc + rows[t], HS = NC * L (NC = 0: any multiple of L, with q read from
// L1 instead of registers). Each tile of L positions takes one pass per query head (its K rows stay
// in L1 between passes): L dot products kept as per-lane partial sums, then one vlane_sums tree
// gives the tile's L scores.
template <int NC>
static void scores(float* s, int Tp, const float* qg, int G, const float* kc, const int64_t* rows, int T,
                   int HS, float sc) {
  const int nc = NC ? NC : HS / L;
  const vf scv = vset(sc);
  for (int t0 = 0; t0 < T; t0 += L) {
    for (int g = 0; g < G; g++) {
      const float* qh = qg + (size_t)g * HS;
      vf qv[NC ? NC : 1], acc[L];
      for (int c = 0; c < NC; c++) qv[c] = vload(qh + c * L);
      auto qc = [&](int c) { return NC ? qv[c] : vload(qh + c * L); };
#pragma GCC unroll 8
      for (int j = 0; j < L; j++) {
        const float* kr = kc + rows[t0 + j];
        vf a = vmul(qc(0), vload(kr));
        for (int c = 1; c < nc; c++) a = vfma(qc(c), vload(kr + c * L), a);
        acc[j] = a;
      }
      vstore(s + (size_t)g * Tp + t0, vmul(scv, vlane_sums(acc)));
    }
  }
}

// scores<HS / L> up to 16 vectors (q in registers), scores<0> beyond
static void scores_simd(float* s, int Tp, const float* qg, int G, const float* kc, const int64_t* rows,
                        int T, int HS, float sc) {
  using Fn = void (*)(float*, int, const float*, int, const float*, const int64_t*, int, int, float);
  static constexpr Fn by_nc[17] = {scores<0>,  scores<1>,  scores<2>,  scores<3>,  scores<4>,  scores<5>,
                                   scores<6>,  scores<7>,  scores<8>,  scores<9>,  scores<10>, scores<11>,
                                   scores<12>, scores<13>, scores<14>, scores<15>, scores<16>};
  const int nc = HS / L;
  by_nc[nc <= 16 ? nc : 0](s, Tp, qg, G, kc, rows, T, HS, sc);
}

// Columns [d, d + C * L) of og (G, HS): og[g][..] = inv[g] * sum_t p[g * Tp + t] v_t[..], where
// v_t = vc + rows[t]. The G * C output vectors stay in registers over all positions; U positions in
// flight multiply them into enough independent accumulators to hide the FMA latency. The U partial
// sums are added in a fixed order.
template <int G, int C>
static void weighted_tile(float* og, const float* p, int Tp, const float* inv, const float* vc,
                          const int64_t* rows, int T, int HS, int d) {
  constexpr int U = G * C >= 8 ? 1 : G * C >= 4 ? 2 : 4;
  vf acc[U][G][C];
  for (int u = 0; u < U; u++)
    for (int g = 0; g < G; g++)
      for (int c = 0; c < C; c++) acc[u][g][c] = vzero();
  auto step = [&](int u, int t) {
    vf v[C];
    for (int c = 0; c < C; c++) v[c] = vload(vc + rows[t] + d + c * L);
    for (int g = 0; g < G; g++) {
      const vf pg = vset(p[(size_t)g * Tp + t]);
      for (int c = 0; c < C; c++) acc[u][g][c] = vfma(pg, v[c], acc[u][g][c]);
    }
  };
  int t = 0;
  for (; t + U <= T; t += U)
    for (int u = 0; u < U; u++) step(u, t + u);
  for (; t < T; t++) step(0, t);
  for (int g = 0; g < G; g++)
    for (int c = 0; c < C; c++) {
      vf r = acc[0][g][c];
      for (int u = 1; u < U; u++) r = vadd(r, acc[u][g][c]);
      vstore(og + (size_t)g * HS + d + c * L, vmul(r, vset(inv[g])));
    }
}

using TileFn = void (*)(float*, const float*, int, const float*, const float*, const int64_t*, int, int,
                        int);
template <int G>
constexpr TileFn kTiles[3] = {weighted_tile<G, 1>, weighted_tile<G, 2>, weighted_tile<G, 4>};

// og (G, HS): og[g] = inv[g] * sum_t p[g * Tp + t] v_t, HS a multiple of L. Query heads go in
// groups of at most 8, columns in tiles of C = 4, 2 or 1 vectors: as wide as the registers allow.
static void weighted_sum_simd(float* og, const float* p, int Tp, const float* inv, int G,
                              const float* vc, const int64_t* rows, int T, int HS) {
  static constexpr const TileFn* by_g[8] = {kTiles<1>, kTiles<2>, kTiles<3>, kTiles<4>,
                                            kTiles<5>, kTiles<6>, kTiles<7>, kTiles<8>};
#if defined(__AVX512VL__)
  constexpr int kRegs = 16;  // output vectors held at once, of 32 vector registers
#else
  constexpr int kRegs = 8;  // of 16
#endif
  const int NC = HS / L;
  for (int g0 = 0; g0 < G; g0 += 8) {
    const int n = G - g0 < 8 ? G - g0 : 8;
    const int ci = NC % 4 == 0 && n * 4 <= kRegs ? 2 : NC % 2 == 0 && n * 2 <= kRegs ? 1 : 0;
    const TileFn f = by_g[n - 1][ci];
    for (int d = 0; d < HS; d += L << ci)
      f(og + (size_t)g0 * HS, p + (size_t)g0 * Tp, Tp, inv + g0, vc, rows, T, HS, d);
  }
}

// the vector kernels cover head sizes of whole vectors
static bool simd_fits(int HS) { return HS % L == 0; }
#else
static bool simd_fits(int) { return false; }
#endif

// The plain loops, for builds without vectors and head sizes the vector kernels do not cover.
static void scores_plain(float* s, int Tp, const float* qg, int G, const float* kc, const int64_t* rows,
                         int T, int HS, float sc) {
  for (int t = 0; t < T; t++)
    for (int g = 0; g < G; g++) s[(size_t)g * Tp + t] = sc * dot(qg + (size_t)g * HS, kc + rows[t], HS);
}

static void weighted_sum_plain(float* og, const float* p, int Tp, const float* inv, int G, const float* vc,
                               const int64_t* rows, int T, int HS) {
  for (int i = 0; i < G * HS; i++) og[i] = 0.0f;
  for (int t = 0; t < T; t++)
    for (int g = 0; g < G; g++) axpy_small(og + (size_t)g * HS, vc + rows[t], p[(size_t)g * Tp + t], HS);
  for (int g = 0; g < G; g++)
    for (int d = 0; d < HS; d++) og[(size_t)g * HS + d] *= inv[g];
}

// Scratch of one thread: pool offsets of a sequence's positions, scores, 1 / softmax sums. Rows are
// padded to a multiple of kPad like the scores, repeating the last position (read, never used).
struct DecodeScratch {
  std::vector<int64_t> rows;
  std::vector<float> s, inv;
};

// The G query heads qg (G, HS) of one kv head (its K/V at column koff of each pool row) attend to
// the first T positions of the sequence whose blocks are `blocks`; og (G, HS).
static void attend_group(float* og, const float* qg, const float* kc, const float* vc, const int32_t* blocks,
                         int T, int G, int HS, int W, int BS, int koff, float sc, DecodeScratch& m) {
  const int Tp = (T + kPad - 1) / kPad * kPad;
  if ((int)m.rows.size() < Tp) m.rows.resize(Tp);
  if (m.s.size() < (size_t)G * Tp) m.s.resize((size_t)G * Tp);
  if ((int)m.inv.size() < G) m.inv.resize(G);
  int64_t* rows = m.rows.data();
  for (int t0 = 0, blk = 0; t0 < T; t0 += BS, blk++) {  // a block's positions are consecutive pool rows
    const int64_t base = (int64_t)blocks[blk] * BS * W + koff;
    const int n = T - t0 < BS ? T - t0 : BS;
    for (int i = 0; i < n; i++) rows[t0 + i] = base + (int64_t)i * W;
  }
  for (int t = T; t < Tp; t++) rows[t] = rows[T - 1];
  float* s = m.s.data();
  const bool simd = simd_fits(HS);
#if MASO_DECODE_SIMD
  if (simd) scores_simd(s, Tp, qg, G, kc, rows, T, HS, sc);
#endif
  if (!simd) scores_plain(s, Tp, qg, G, kc, rows, T, HS, sc);
  for (int g = 0; g < G; g++) {
    float* sg = s + (size_t)g * Tp;
    for (int t = T; t < Tp; t++) sg[t] = -INFINITY;  // exp gives 0 there
    m.inv[g] = 1.0f / softmax_numerators(sg, Tp);
  }
#if MASO_DECODE_SIMD
  if (simd) weighted_sum_simd(og, s, Tp, m.inv.data(), G, vc, rows, T, HS);
#endif
  if (!simd) weighted_sum_plain(og, s, Tp, m.inv.data(), G, vc, rows, T, HS);
}

// Fast path, same arguments as attention_decode_naive. Each output element is computed by one task,
// in an order fixed by the shapes, so the result does not depend on the thread count.
void attention_decode(float* out, const float* q, const float* kc, const float* vc,
                      const int32_t* table, const int32_t* tstart, const int32_t* lens, int B,
                      int NH, int KVH, int HS, int BS) {
  const int group = NH / KVH, W = KVH * HS;
  const float sc = 1.0f / std::sqrt((float)HS);
  int64_t cached = 0;  // positions read, over all sequences
  for (int b = 0; b < B; b++) cached += lens[b];
#pragma omp parallel if (pays(cached * NH * HS))
  {
    static thread_local DecodeScratch m;  // kept between calls: a step calls this once per layer
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int b = 0; b < B; b++)
      for (int kh = 0; kh < KVH; kh++) {
        const size_t g0 = (size_t)b * NH + (size_t)kh * group;  // first query head of the group
        attend_group(out + g0 * HS, q + g0 * HS, kc, vc, table + tstart[b], lens[b], group, HS, W, BS,
                     kh * HS, sc, m);
      }
  }
}

}  // namespace maso
