// N-API bindings for the KV-cache sampler's kernels (native/decode.cc). Same rules as addon.cc:
// check every argument and buffer length, throw JavaScript errors, never abort. Every block id,
// slot and length is checked here, so a wrong block table can never read or write out of bounds.
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "napi-args.h"

namespace maso {
// native/decode.cc (declared here: kernels.h belongs to the training engine)
void kv_cache_write(float* kc, float* vc, const float* k, const float* v, const int32_t* slots, int N,
                    int W);
void attention_decode(float* out, const float* q, const float* kc, const float* vc,
                      const int32_t* table, const int32_t* tstart, const int32_t* lens, int B,
                      int NH, int KVH, int HS, int BS);
void attention_decode_naive(float* out, const float* q, const float* kc, const float* vc,
                            const int32_t* table, const int32_t* tstart, const int32_t* lens, int B,
                            int NH, int KVH, int HS, int BS);
void exp_nonpos_n(float* y, const float* x, int64_t n);
}  // namespace maso

using namespace maso;

namespace {

// kvCacheWrite(kc, vc, k, v, slots, N, W, rows)
Napi::Value KvCacheWrite(const Napi::CallbackInfo& info) {
  Call c{info, "kvCacheWrite"};
  c.arity(8);
  int N = c.dim(5, "N"), W = c.dim(6, "W"), rows = c.dim(7, "rows");
  if (W < 1) c.fail(6, "W", "must be >= 1");
  float* kc = c.f32(0, "kc", (int64_t)rows * W);
  float* vc = c.f32(1, "vc", (int64_t)rows * W);
  if (kc == vc && rows > 0) c.fail(1, "vc", "must not be the same buffer as kc");
  kv_cache_write(kc, vc, c.f32(2, "k", (int64_t)N * W), c.f32(3, "v", (int64_t)N * W),
                 c.i32(4, "slots", N, 0, rows), N, W);
  return info.Env().Undefined();
}

// attentionDecode(out, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P)
Napi::Value AttentionDecodeImpl(const Napi::CallbackInfo& info, bool naive) {
  Call c{info, naive ? "attentionDecodeNaive" : "attentionDecode"};
  c.arity(13);
  int B = c.dim(7, "B"), NH = c.dim(8, "NH"), KVH = c.dim(9, "KVH"), HS = c.dim(10, "HS");
  int BS = c.dim(11, "BS"), P = c.dim(12, "P");
  if (KVH == 0 || NH % KVH != 0) c.fail(9, "KVH", "must divide NH");
  if (HS < 1) c.fail(10, "HS", "must be >= 1");
  if (BS < 1) c.fail(11, "BS", "must be >= 1");
  int32_t* tstart = c.i32(5, "tableStarts", (int64_t)B + 1, 0, 2147483647);
  if (tstart[0] != 0) c.fail(5, "tableStarts", "must begin at 0");
  for (int b = 0; b < B; b++)
    if (tstart[b + 1] < tstart[b]) c.fail(5, "tableStarts", "must be non-decreasing");
  int32_t* table = c.i32(4, "table", tstart[B], 0, P);
  int32_t* lens = c.i32(6, "lens", B, 1, 2147483647);
  for (int b = 0; b < B; b++)
    if ((int64_t)lens[b] > (int64_t)(tstart[b + 1] - tstart[b]) * BS)
      c.fail(6, "lens", "sequence " + std::to_string(b) + " attends to " + std::to_string(lens[b]) +
                            " positions but owns only " + std::to_string(tstart[b + 1] - tstart[b]) +
                            " blocks of " + std::to_string(BS));
  int64_t nq = (int64_t)B * NH * HS, pool = (int64_t)P * BS * KVH * HS;
  float* out = c.f32(0, "out", nq);
  float* q = c.f32(1, "q", nq);
  float* kc = c.f32(2, "kc", pool);
  float* vc = c.f32(3, "vc", pool);
  (naive ? attention_decode_naive : attention_decode)(out, q, kc, vc, table, tstart, lens, B, NH, KVH, HS, BS);
  return info.Env().Undefined();
}
Napi::Value AttentionDecode(const Napi::CallbackInfo& info) { return AttentionDecodeImpl(info, false); }
Napi::Value AttentionDecodeNaive(const Napi::CallbackInfo& info) { return AttentionDecodeImpl(info, true); }

// expNonpos(out, x, n): out = exp(x) for x <= 0, by the fast path's softmax exp (tests check its accuracy)
Napi::Value ExpNonpos(const Napi::CallbackInfo& info) {
  Call c{info, "expNonpos"};
  c.arity(3);
  int n = c.dim(2, "n");
  exp_nonpos_n(c.f32(0, "out", n), c.f32(1, "x", n), n);
  return info.Env().Undefined();
}

}  // namespace

void RegisterDecodeBindings(Napi::Env env, Napi::Object exports) {
#define EXPORT(name, fn) exports.Set(name, Napi::Function::New(env, fn, name))
  EXPORT("kvCacheWrite", KvCacheWrite);
  EXPORT("attentionDecode", AttentionDecode);
  EXPORT("attentionDecodeNaive", AttentionDecodeNaive);
  EXPORT("expNonpos", ExpNonpos);
#undef EXPORT
}
