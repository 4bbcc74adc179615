// exp for the loops that take millions of them per step (softmax rows over a vocabulary), written
// so the compiler vectorises it at every build level: round-to-nearest by the 1.5·2^23 trick (no
// SSE4.1 rounding needed), a degree-7 polynomial on |f| <= ln2/2 (truncation error < 1e-8
// relative, about 1 ulp with rounding), and the power of two built in the exponent bits.
// Inputs are clamped to [-87.3, 88]: below, the result is ~1e-38 instead of a denormal or 0.
#pragma once
#include <cstdint>
#include <cstring>

namespace maso {

static inline float exp_approx(float x) {
  x = x < -87.3f ? -87.3f : (x > 88.0f ? 88.0f : x);
  const float shift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
  const float kf = (x * 1.44269504088896341f + shift) - shift;
  const float f = (x - kf * 0.693145751953125f) - kf * 1.428606765330187e-06f;  // ln2 split hi + lo
  float p = 1.0f / 5040.0f;
  p = p * f + 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  const int32_t bits = ((int32_t)kf + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

}  // namespace maso
