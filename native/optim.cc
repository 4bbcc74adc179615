// AdamW with decoupled weight decay (Loshchilov & Hutter), the update torch.optim.AdamW performs.
//
// The loop is written as vector code: with std::sqrt (which may set errno) GCC kept it scalar, and
// the update then ran at about a third of the memory bandwidth it needs (a 0.5B model's update
// moves 14 GB). Every operation is spelled out as the scalar loop compiled: one rounding per
// product, sum, quotient and square root (all correctly rounded in every width), and the same two
// fused multiply-adds where the build level has FMA. So each level's bits are those of its scalar
// loop, whatever the vector width.
#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernels.h"
#include "vec.h"

namespace maso {
namespace {

// a*b + c: fused (one rounding) where the level has FMA, as GCC contracted the scalar loop there
static inline float madd(float a, float b, float c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// x as it stands, rounded: the barrier keeps GCC from fusing the product that made x into the next
// sum (it fused param*decay - step into one fms in the vector loop; the scalar loop rounds twice)
template <class T>
static inline T rounded(T x) {
  __asm__("" : "+v"(x));
  return x;
}

// The constants of one update, each rounded once as the scalar loop rounded it.
struct AdamwConsts {
  float beta1, beta2, omb1, omb2, decay, stepSize, bc2Sqrt, eps;
};

static inline void adamw_one(float* param, const float* grad, float* m, float* v, int64_t i,
                             const AdamwConsts& k) {
  float g = grad[i];
  float mi = madd(k.beta1, m[i], k.omb1 * g);
  float vi = madd(k.beta2, v[i], k.omb2 * g * g);
  m[i] = mi;
  v[i] = vi;
  float p = rounded(param[i] * k.decay);
  param[i] = p - k.stepSize * mi / (std::sqrt(vi) / k.bc2Sqrt + k.eps);
}

// One vector of lanes per level; +, -, * and / are GCC's element-wise vector operators.
#if defined(__AVX512F__)
using V = __m512;
constexpr int64_t kLanes = 16;
static inline V ld(const float* p) { return _mm512_loadu_ps(p); }
static inline void st(float* p, V x) { _mm512_storeu_ps(p, x); }
static inline V splat(float x) { return _mm512_set1_ps(x); }
static inline V root(V a) { return _mm512_sqrt_ps(a); }
static inline V vmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
#elif defined(__AVX__)
using V = __m256;
constexpr int64_t kLanes = 8;
static inline V ld(const float* p) { return _mm256_loadu_ps(p); }
static inline void st(float* p, V x) { _mm256_storeu_ps(p, x); }
static inline V splat(float x) { return _mm256_set1_ps(x); }
static inline V root(V a) { return _mm256_sqrt_ps(a); }
#if defined(__FMA__)
static inline V vmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
#endif
#elif defined(__SSE2__)
using V = __m128;
constexpr int64_t kLanes = 4;
static inline V ld(const float* p) { return _mm_loadu_ps(p); }
static inline void st(float* p, V x) { _mm_storeu_ps(p, x); }
static inline V splat(float x) { return _mm_set1_ps(x); }
static inline V root(V a) { return _mm_sqrt_ps(a); }
#endif
#if defined(__SSE2__) && !defined(__AVX512F__) && !defined(__FMA__)
static inline V vmadd(V a, V b, V c) { return a * b + c; }  // no FMA to fuse into
#endif

#if defined(__SSE2__)
// adamw_one on kLanes consecutive elements from i
static inline void adamw_lanes(float* param, const float* grad, float* m, float* v, int64_t i,
                               const AdamwConsts& k) {
  const V g = ld(grad + i);
  const V mi = vmadd(splat(k.beta1), ld(m + i), splat(k.omb1) * g);
  const V vi = vmadd(splat(k.beta2), ld(v + i), splat(k.omb2) * g * g);
  st(m + i, mi);
  st(v + i, vi);
  const V p = rounded(ld(param + i) * splat(k.decay));
  const V denom = root(vi) / splat(k.bc2Sqrt) + splat(k.eps);
  st(param + i, p - splat(k.stepSize) * mi / denom);
}
#endif

}  // namespace

// Elements per block: a block's new weights are still in cache when their bf16 copies are written.
// A multiple of every level's kLanes, so each element takes the same path (lanes or tail) as ever.
constexpr int64_t kBlock = 4096;

void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n, float lr,
                  float beta1, float beta2, float eps, float weightDecay, float bc1, float bc2) {
  weights_changed();  // bf16 copies of these weights are outdated, but for those written here
  const Bf16Refresh copies(param, n);
  const AdamwConsts k{beta1,      beta2, 1.0f - beta1, 1.0f - beta2, madd(-lr, weightDecay, 1.0f),
                      lr / bc1, std::sqrt(bc2), eps};
  int64_t done = 0;
#if defined(__SSE2__)
  done = n / kLanes * kLanes;
  const int64_t blocks = (done + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallel : pays(n))
  for (int64_t b = 0; b < blocks; b++) {
    const int64_t i0 = b * kBlock, i1 = std::min(i0 + kBlock, done);
    for (int64_t i = i0; i < i1; i += kLanes) adamw_lanes(param, grad, m, v, i, k);
    copies.write(param, i0, i1);
  }
#endif
  for (int64_t i = done; i < n; i++) adamw_one(param, grad, m, v, i, k);
  copies.write(param, done, n);
}

}  // namespace maso
