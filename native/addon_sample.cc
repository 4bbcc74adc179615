// N-API binding of the sampler's batch arithmetic (native/sample.cc). Same rules as addon.cc: every
// argument and buffer length is checked here, and a bad one throws a JavaScript error.
#include <napi.h>

#include <cmath>
#include <cstdint>

#include "napi-args.h"

namespace maso {
void sample_rows(const float* z, int R, int V, int allowed, const float* inv, const double* u,
                 double* lse, int32_t* token, double* sampled_lp);
}  // namespace maso

using namespace maso;

namespace {

// sampleRows(z, R, V, allowed, inv, u, lse, token, sampledLogprob)
Napi::Value SampleRows(const Napi::CallbackInfo& info) {
  Call c{info, "sampleRows"};
  c.arity(9);
  int R = c.dim(1, "R"), V = c.dim(2, "V"), allowed = c.dim(3, "allowed");
  if (V < 1) c.fail(2, "V", "must be >= 1");
  if (allowed < 1) c.fail(3, "allowed", "must be >= 1");
  const float* z = c.f32(0, "z", (int64_t)R * V);
  const float* inv = c.f32(4, "inv", R);
  for (int r = 0; r < R; r++)
    if (!(inv[r] >= 0.0f) || std::isinf(inv[r])) c.fail(4, "inv", "must hold finite values >= 0");
  const double* u = c.f64(5, "u", R);
  for (int r = 0; r < R; r++)
    if (!std::isnan(u[r]) && !(u[r] >= 0.0 && u[r] < 1.0)) c.fail(5, "u", "must hold values in [0, 1) or NaN");
  double* lse = c.f64(6, "lse", R);
  int32_t* token = c.i32(7, "token", R, INT32_MIN, (int64_t)INT32_MAX + 1);
  double* sampled = c.f64(8, "sampledLogprob", R);
  sample_rows(z, R, V, allowed, inv, u, lse, token, sampled);
  return info.Env().Undefined();
}

}  // namespace

void RegisterSampleBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("sampleRows", Napi::Function::New(env, SampleRows, "sampleRows"));
}
