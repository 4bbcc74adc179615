// exp for the loops that take millions of them (softmax rows over a vocabulary or a context, the
// SwiGLU gate), written so that every build level's compiler vectorises it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace maso {

// A float's bits and back (memcpy: std::bit_cast is C++20; compilers turn it into a move)
static inline uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
static inline float float_of(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// 2^n for -126 <= n <= 127
static inline float pow2i(int32_t n) { return float_of((uint32_t)(n + 127) << 23); }

// exp(x) for x <= 0, written so that every build level's compiler vectorises it. x = n ln2 + r with
// |r| <= ln2/2; n * kLn2Hi is exact (kLn2Hi has 9 significant bits), so x - n * kLn2Hi is too, and
// only the small kLn2Lo correction rounds. e^r is its degree-7 Taylor polynomial (truncation under
// 0.1 ulp); 2^n is applied in two exact halves so that results below FLT_MIN round once into
// subnormals, as std::exp's do. At most 1 ulp from std::exp over [-88, 0] (every 61st float, when
// written); test/generate/decode-kernels.int.test.ts holds it to 2 ulp of Math.exp.
static inline float exp_nonpos(float x) {
  constexpr float kLog2e = 1.44269504f, kRound = 12582912.0f;  // adding 1.5 * 2^23 rounds to an integer
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;  // ln 2 = kLn2Hi + kLn2Lo
  // x = max(x, -104): exp(-104) rounds to 0, and n stays in the range of the two halves. As bits:
  // for x <= 0 a more negative float is a larger unsigned integer, and a float compare here would
  // keep GCC from vectorising the loop below AVX-512 (it will not turn it into a blend).
  x = float_of(std::min(bits_of(x), 0xC2D00000u));  // -104.0f
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t ni = (int32_t)n, n1 = ni >> 1;
  return p * pow2i(n1) * pow2i(ni - n1);
}

// The logistic function through exp_nonpos only (exp of -|g|), so no argument can overflow.
static inline float sigmoid(float g) {
  const float e = exp_nonpos(-std::fabs(g));
  return g >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

}  // namespace maso
