// N-API surface of the native engine. Every binding checks argument types, integer ranges, index
// contents and buffer lengths before calling a kernel, and throws a JavaScript error naming the
// function, argument and expectation. Nothing here may exit or abort: we live inside the user's
// Node process.
#include <napi.h>

#include <cmath>
#include <string>

#include "cpu.h"
#include "kernels.h"
#include "napi-args.h"

using namespace maso;

// Bindings of the KV-cache sampler's kernels live in addon_decode.cc.
void RegisterDecodeBindings(Napi::Env env, Napi::Object exports);
void RegisterSampleBindings(Napi::Env env, Napi::Object exports);
// The run-directory lock (flock) lives in file_lock.cc.
void RegisterFileLockBindings(Napi::Env env, Napi::Object exports);

namespace {

#define CALL(name, n) \
  Call c{info, name}; \
  c.arity(n)

Napi::Value MatmulForwardImpl(const Napi::CallbackInfo& info, bool naive) {
  CALL(naive ? "matmulForwardNaive" : "matmulForward", 8);
  int N = c.dim(4, "N"), IC = c.dim(5, "IC"), OC = c.dim(6, "OC");
  bool acc = c.flag(7, "accumulate");
  float* out = c.f32(0, "out", (int64_t)N * OC);
  float* inp = c.f32(1, "inp", (int64_t)N * IC);
  float* w = c.f32(2, "weight", (int64_t)OC * IC);
  float* b = c.f32(3, "bias", OC, true);
  (naive ? matmul_forward_naive : matmul_forward)(out, inp, w, b, N, IC, OC, acc);
  return info.Env().Undefined();
}
Napi::Value MatmulForward(const Napi::CallbackInfo& info) { return MatmulForwardImpl(info, false); }
Napi::Value MatmulForwardNaive(const Napi::CallbackInfo& info) { return MatmulForwardImpl(info, true); }

// matmulForwardParts(outs, inp, weights, biases, N, IC, OCs): matmulForward of each part, one input
Napi::Value MatmulForwardParts(const Napi::CallbackInfo& info) {
  CALL("matmulForwardParts", 7);
  int N = c.dim(4, "N"), IC = c.dim(5, "IC");
  Napi::Array ocs = c.list(6, "OCs", 1, kMaxParts);
  const int count = (int)ocs.Length();
  Napi::Array outs = c.list(0, "outs", count, count), weights = c.list(2, "weights", count, count),
              biases = c.list(3, "biases", count, count);
  float* inp = c.f32(1, "inp", (int64_t)N * IC);
  LinearPart parts[kMaxParts];
  for (int p = 0; p < count; p++) {
    const std::string at = "[" + std::to_string(p) + "]";
    const int OC = c.dim(ocs.Get(p), 6, "OCs" + at);
    parts[p] = {c.f32(outs.Get(p), 0, "outs" + at, (int64_t)N * OC), c.f32(weights.Get(p), 2, "weights" + at, (int64_t)OC * IC),
                c.f32(biases.Get(p), 3, "biases" + at, OC, true), OC};
  }
  matmul_forward_parts(parts, count, inp, N, IC);
  return info.Env().Undefined();
}

// loraForwardParts(outs, us, As, Bs, inp, r0, r1, IC, R, OCs, scale): over rows [r0, r1) of inp
// (rows of IC) and of each outs[p] (rows of OCs[p]): us[p] = scale * x As[p]^T, (r1 - r0, R),
// then outs[p] += us[p] Bs[p]^T
Napi::Value LoraForwardParts(const Napi::CallbackInfo& info) {
  CALL("loraForwardParts", 11);
  const int r0 = c.dim(5, "r0"), r1 = c.dim(6, "r1"), IC = c.dim(7, "IC"), R = c.dim(8, "R");
  if (r1 < r0) c.fail(6, "r1", "must not be below r0");
  const int N = r1 - r0;
  Napi::Array ocs = c.list(9, "OCs", 1, kMaxParts);
  const int count = (int)ocs.Length();
  Napi::Array outs = c.list(0, "outs", count, count), us = c.list(1, "us", count, count),
              as = c.list(2, "As", count, count), bs = c.list(3, "Bs", count, count);
  const float* inp = c.f32(4, "inp", (int64_t)r1 * IC);
  const float s = (float)c.number(10, "scale");
  LoraPart parts[kMaxParts];
  for (int p = 0; p < count; p++) {
    const std::string at = "[" + std::to_string(p) + "]";
    const int OC = c.dim(ocs.Get(p), 9, "OCs" + at);
    parts[p] = {c.f32(outs.Get(p), 0, "outs" + at, (int64_t)r1 * OC) + (size_t)r0 * OC, c.f32(us.Get(p), 1, "us" + at, (int64_t)N * R),
                c.f32(as.Get(p), 2, "As" + at, (int64_t)R * IC), c.f32(bs.Get(p), 3, "Bs" + at, (int64_t)OC * R), OC};
  }
  lora_forward_parts(parts, count, inp + (size_t)r0 * IC, N, IC, R, s);
  return info.Env().Undefined();
}

Napi::Value MatmulBackward(const Napi::CallbackInfo& info) {
  CALL("matmulBackward", 9);
  int N = c.dim(6, "N"), IC = c.dim(7, "IC"), OC = c.dim(8, "OC");
  matmul_backward(c.f32(0, "dinp", (int64_t)N * IC, true), c.f32(1, "dweight", (int64_t)OC * IC, true),
                  c.f32(2, "dbias", OC, true), c.f32(3, "dout", (int64_t)N * OC),
                  c.f32(4, "inp", (int64_t)N * IC), c.f32(5, "weight", (int64_t)OC * IC), N, IC, OC);
  return info.Env().Undefined();
}

Napi::Value EmbeddingForward(const Napi::CallbackInfo& info) {
  CALL("embeddingForward", 6);
  int N = c.dim(3, "N"), C = c.dim(4, "C"), V = c.dim(5, "V");
  embedding_forward(c.f32(0, "out", (int64_t)N * C), c.i32(1, "ids", N, 0, V),
                    c.f32(2, "wte", (int64_t)V * C), N, C);
  return info.Env().Undefined();
}

Napi::Value EmbeddingBackward(const Napi::CallbackInfo& info) {
  CALL("embeddingBackward", 6);
  int N = c.dim(3, "N"), C = c.dim(4, "C"), V = c.dim(5, "V");
  embedding_backward(c.f32(0, "dwte", (int64_t)V * C), c.f32(1, "dout", (int64_t)N * C),
                     c.i32(2, "ids", N, 0, V), N, C);
  return info.Env().Undefined();
}

Napi::Value RmsnormForward(const Napi::CallbackInfo& info) {
  CALL("rmsnormForward", 7);
  int N = c.dim(4, "N"), C = c.dim(5, "C");
  float eps = (float)c.number(6, "eps");
  rmsnorm_forward(c.f32(0, "out", (int64_t)N * C), c.f32(1, "rstd", N), c.f32(2, "inp", (int64_t)N * C),
                  c.f32(3, "weight", C), N, C, eps);
  return info.Env().Undefined();
}

Napi::Value RmsnormBackward(const Napi::CallbackInfo& info) {
  CALL("rmsnormBackward", 8);
  int N = c.dim(6, "N"), C = c.dim(7, "C");
  rmsnorm_backward(c.f32(0, "dinp", (int64_t)N * C, true), c.f32(1, "dweight", C, true),
                   c.f32(2, "dout", (int64_t)N * C), c.f32(3, "inp", (int64_t)N * C),
                   c.f32(4, "weight", C), c.f32(5, "rstd", N), N, C);
  return info.Env().Undefined();
}

Napi::Value RopeImpl(const Napi::CallbackInfo& info, bool backward) {
  CALL(backward ? "ropeBackward" : "ropeForward", 7);
  int N = c.dim(3, "N"), H = c.dim(4, "H"), HS = c.dim(5, "HS");
  float theta = (float)c.number(6, "theta");
  if (HS % 2 != 0) c.fail(5, "HS", "must be even");
  if (!(theta > 1.0f)) c.fail(6, "theta", "must be > 1");
  int64_t n = (int64_t)N * H * HS;
  float* out = c.f32(0, "out", n);
  float* inp = c.f32(1, "inp", n);
  int32_t* pos = c.i32(2, "pos", N, 0, 1 << 30);
  (backward ? rope_backward : rope_forward)(out, inp, pos, N, H, HS, theta);
  return info.Env().Undefined();
}
Napi::Value RopeForward(const Napi::CallbackInfo& info) { return RopeImpl(info, false); }
Napi::Value RopeBackward(const Napi::CallbackInfo& info) { return RopeImpl(info, true); }

Napi::Value SwigluForward(const Napi::CallbackInfo& info) {
  CALL("swigluForward", 5);
  int N = c.dim(3, "N"), F = c.dim(4, "F");
  int64_t n = (int64_t)N * F;
  swiglu_forward(c.f32(0, "out", n), c.f32(1, "gate", n), c.f32(2, "up", n), N, F);
  return info.Env().Undefined();
}

Napi::Value SwigluBackward(const Napi::CallbackInfo& info) {
  CALL("swigluBackward", 7);
  int N = c.dim(5, "N"), F = c.dim(6, "F");
  int64_t n = (int64_t)N * F;
  swiglu_backward(c.f32(0, "dgate", n), c.f32(1, "dup", n), c.f32(2, "dout", n), c.f32(3, "gate", n),
                  c.f32(4, "up", n), N, F);
  return info.Env().Undefined();
}

Napi::Value TanhForward(const Napi::CallbackInfo& info) {
  CALL("tanhForward", 3);
  int64_t n = c.count(2, "n");
  tanh_forward(c.f32(0, "out", n), c.f32(1, "inp", n), n);
  return info.Env().Undefined();
}

Napi::Value TanhBackward(const Napi::CallbackInfo& info) {
  CALL("tanhBackward", 4);
  int64_t n = c.count(3, "n");
  tanh_backward(c.f32(0, "dinp", n), c.f32(1, "dout", n), c.f32(2, "out", n), n);
  return info.Env().Undefined();
}

Napi::Value Axpy(const Napi::CallbackInfo& info) {
  CALL("axpy", 4);
  int64_t n = c.count(3, "n");
  axpy(c.f32(0, "y", n), c.f32(1, "x", n), (float)c.number(2, "alpha"), n);
  return info.Env().Undefined();
}

Napi::Value Sumsq(const Napi::CallbackInfo& info) {
  CALL("sumsq", 2);
  int64_t n = c.count(1, "n");
  return Napi::Number::New(info.Env(), sumsq(c.f32(0, "x", n), n));
}

Napi::Value AdviseHugePages(const Napi::CallbackInfo& info) {
  CALL("adviseHugePages", 1);
  float* x = c.f32(0, "x", 0);
  const size_t n = info[0].As<Napi::Float32Array>().ElementLength();
  return Napi::Number::New(info.Env(), (double)advise_huge_pages(x, n * sizeof(float)));
}

Napi::Value Scale(const Napi::CallbackInfo& info) {
  CALL("scale", 3);
  int64_t n = c.count(2, "n");
  scale(c.f32(0, "x", n), (float)c.number(1, "s"), n);
  return info.Env().Undefined();
}

Napi::Value Zero(const Napi::CallbackInfo& info) {
  CALL("zero", 2);
  int64_t n = c.count(1, "n");
  zero(c.f32(0, "x", n), n);
  return info.Env().Undefined();
}

Napi::Value GatherRows(const Napi::CallbackInfo& info) {
  CALL("gatherRows", 6);
  int M = c.dim(3, "M"), C = c.dim(4, "C"), Nsrc = c.dim(5, "Nsrc");
  gather_rows(c.f32(0, "dst", (int64_t)M * C), c.f32(1, "src", (int64_t)Nsrc * C),
              c.i32(2, "rows", M, 0, Nsrc), M, C);
  return info.Env().Undefined();
}

Napi::Value ScatterAddRows(const Napi::CallbackInfo& info) {
  CALL("scatterAddRows", 6);
  int M = c.dim(3, "M"), C = c.dim(4, "C"), Ndst = c.dim(5, "Ndst");
  scatter_add_rows(c.f32(0, "dst", (int64_t)Ndst * C), c.f32(1, "src", (int64_t)M * C),
                   c.i32(2, "rows", M, 0, Ndst), M, C);
  return info.Env().Undefined();
}

// starts must be B+1 non-decreasing offsets beginning at 0; returns N = starts[B]
int checkStarts(const Call& c, int i, int B) {
  int32_t* s = c.i32(i, "starts", B + 1, 0, 2147483647);
  if (s[0] != 0) c.fail(i, "starts", "must begin at 0");
  for (int b = 0; b < B; b++)
    if (s[b + 1] < s[b]) c.fail(i, "starts", "must be non-decreasing");
  return s[B];
}

void checkHeads(const Call& c, int i, int NH, int KVH) {
  if (KVH == 0 || NH % KVH != 0) c.fail(i, "KVH", "must divide NH");
}

Napi::Value AttentionForwardImpl(const Napi::CallbackInfo& info, bool naive) {
  CALL(naive ? "attentionForwardNaive" : "attentionForward", 10);
  int B = c.dim(6, "B"), NH = c.dim(7, "NH"), KVH = c.dim(8, "KVH"), HS = c.dim(9, "HS");
  checkHeads(c, 8, NH, KVH);
  int N = checkStarts(c, 5, B);
  int64_t nq = (int64_t)N * NH * HS, nk = (int64_t)N * KVH * HS;
  (naive ? attention_forward_naive : attention_forward)(c.f32(0, "out", nq), c.f32(1, "lse", (int64_t)N * NH), c.f32(2, "q", nq),
                    c.f32(3, "k", nk), c.f32(4, "v", nk), info[5].As<Napi::Int32Array>().Data(), B,
                    NH, KVH, HS);
  return info.Env().Undefined();
}

Napi::Value AttentionForward(const Napi::CallbackInfo& info) { return AttentionForwardImpl(info, false); }
Napi::Value AttentionForwardNaive(const Napi::CallbackInfo& info) { return AttentionForwardImpl(info, true); }

Napi::Value AttentionBackwardImpl(const Napi::CallbackInfo& info, bool naive) {
  CALL(naive ? "attentionBackwardNaive" : "attentionBackward", 14);
  int B = c.dim(10, "B"), NH = c.dim(11, "NH"), KVH = c.dim(12, "KVH"), HS = c.dim(13, "HS");
  checkHeads(c, 12, NH, KVH);
  int N = checkStarts(c, 9, B);
  int64_t nq = (int64_t)N * NH * HS, nk = (int64_t)N * KVH * HS;
  (naive ? attention_backward_naive : attention_backward)(c.f32(0, "dq", nq), c.f32(1, "dk", nk), c.f32(2, "dv", nk), c.f32(3, "dout", nq),
                     c.f32(4, "out", nq), c.f32(5, "lse", (int64_t)N * NH), c.f32(6, "q", nq),
                     c.f32(7, "k", nk), c.f32(8, "v", nk), info[9].As<Napi::Int32Array>().Data(), B,
                     NH, KVH, HS);
  return info.Env().Undefined();
}

Napi::Value AttentionBackward(const Napi::CallbackInfo& info) { return AttentionBackwardImpl(info, false); }
Napi::Value AttentionBackwardNaive(const Napi::CallbackInfo& info) { return AttentionBackwardImpl(info, true); }

Napi::Value LogitsForward(const Napi::CallbackInfo& info) {
  CALL("logitsForward", 11);
  int M = c.dim(7, "M"), C = c.dim(8, "C"), V = c.dim(9, "V");
  float invTemp = (float)c.number(10, "invTemp");
  if (!(invTemp > 0)) c.fail(10, "invTemp", "must be > 0");
  logits_forward(c.f32(0, "logp", M), c.f32(1, "entropy", M), c.f32(2, "lse", M),
                 c.f32(3, "logits", (int64_t)M * V, true), c.f32(4, "hidden", (int64_t)M * C),
                 c.f32(5, "wte", (int64_t)V * C), c.i32(6, "targets", M, 0, V), M, C, V, invTemp);
  return info.Env().Undefined();
}

Napi::Value LogitsBackward(const Napi::CallbackInfo& info) {
  CALL("logitsBackward", 14);
  int M = c.dim(10, "M"), C = c.dim(11, "C"), V = c.dim(12, "V");
  float invTemp = (float)c.number(13, "invTemp");
  if (!(invTemp > 0)) c.fail(13, "invTemp", "must be > 0");
  logits_backward(c.f32(0, "dhidden", (int64_t)M * C), c.f32(1, "dwte", (int64_t)V * C, true),
                  c.f32(2, "dlogp", M, true), c.f32(3, "dentropy", M, true),
                  c.f32(4, "logits", (int64_t)M * V, true), c.f32(5, "lse", M), c.f32(6, "entropy", M),
                  c.f32(7, "hidden", (int64_t)M * C), c.f32(8, "wte", (int64_t)V * C),
                  c.i32(9, "targets", M, 0, V), M, C, V, invTemp);
  return info.Env().Undefined();
}

Napi::Value AdamwUpdate(const Napi::CallbackInfo& info) {
  CALL("adamwUpdate", 12);
  int64_t n = c.count(4, "n");
  adamw_update(c.f32(0, "param", n), c.f32(1, "grad", n), c.f32(2, "m", n), c.f32(3, "v", n), n,
               (float)c.number(5, "lr"), (float)c.number(6, "beta1"), (float)c.number(7, "beta2"),
               (float)c.number(8, "eps"), (float)c.number(9, "weightDecay"),
               (float)c.number(10, "bc1"), (float)c.number(11, "bc2"));
  return info.Env().Undefined();
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  CALL("setThreads", 1);
  int n = c.dim(0, "n");
  if (n < 1 || n > 1024) c.fail(0, "n", "must be in [1, 1024]");
  set_threads(n);
  return info.Env().Undefined();
}

// Elements a row-major (rows, cols) matrix at leading dimension ld spans; ld < cols is an error.
int64_t span(const Call& c, int i, const char* name, int rows, int cols, int ld) {
  if (ld < cols) c.fail(i, name, "must be >= " + std::to_string(cols) + " (the stored row length)");
  return rows == 0 || cols == 0 ? 0 : (int64_t)(rows - 1) * ld + cols;
}

// C (M,N) = alpha op(A) op(B) + beta C through gemm(), at the current precision.
Napi::Value Gemm(const Napi::CallbackInfo& info) {
  CALL("gemm", 13);
  bool ta = c.flag(0, "transA"), tb = c.flag(1, "transB");
  int M = c.dim(2, "M"), N = c.dim(3, "N"), K = c.dim(4, "K");
  int lda = c.dim(7, "lda"), ldb = c.dim(9, "ldb"), ldc = c.dim(12, "ldc");
  float* A = c.f32(6, "A", span(c, 7, "lda", ta ? K : M, ta ? M : K, lda));
  float* B = c.f32(8, "B", span(c, 9, "ldb", tb ? N : K, tb ? K : N, ldb));
  float* C = c.f32(11, "C", span(c, 12, "ldc", M, N, ldc));
  gemm(ta, tb, M, N, K, (float)c.number(5, "alpha"), A, lda, B, ldb, (float)c.number(10, "beta"), C, ldc);
  return info.Env().Undefined();
}

Napi::Value SetPrecision(const Napi::CallbackInfo& info) {
  CALL("setPrecision", 2);
  const bool invariant = c.flag(1, "invariantRows");
  std::string p = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  if (p == "fp32") {
    set_precision(0);
  } else if (p == "bf16") {
    if (!has_onednn())
      throw Napi::Error::New(info.Env(), "maso native setPrecision(): bf16 needs oneDNN, and this build of the addon "
                                         "was made without it (install libdnnl-dev and rebuild the addon)");
    set_precision(1);
  } else {
    c.fail(0, "precision", "must be \"fp32\" or \"bf16\"");
  }
  set_invariant_rows(invariant);
  return info.Env().Undefined();
}

Napi::Value WeightsChanged(const Napi::CallbackInfo& info) {
  weights_changed();
  return info.Env().Undefined();
}

Napi::Value Precision(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), get_precision() == 1 ? "bf16" : "fp32");
}

Napi::Value Bf16(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("onednn", has_onednn());
  o.Set("version", onednn_version());
  Napi::Object cpu = Napi::Object::New(env);
  cpu.Set("avx512bf16", cpu_avx512bf16());
  cpu.Set("amxbf16", cpu_amxbf16());
  o.Set("cpu", cpu);
  o.Set("rowKernel", gemm_nt_bf16_kernel());
  return o;
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("gemm", gemm_name());
  o.Set("blasConfig", blas_config());
  o.Set("threads", get_threads());
  o.Set("openmp", has_openmp());
  o.Set("level", build_level());
  return o;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
#define EXPORT(name, fn) exports.Set(name, Napi::Function::New(env, fn, name))
  EXPORT("matmulForward", MatmulForward);
  EXPORT("matmulForwardNaive", MatmulForwardNaive);
  EXPORT("matmulForwardParts", MatmulForwardParts);
  EXPORT("loraForwardParts", LoraForwardParts);
  EXPORT("matmulBackward", MatmulBackward);
  EXPORT("embeddingForward", EmbeddingForward);
  EXPORT("embeddingBackward", EmbeddingBackward);
  EXPORT("rmsnormForward", RmsnormForward);
  EXPORT("rmsnormBackward", RmsnormBackward);
  EXPORT("ropeForward", RopeForward);
  EXPORT("ropeBackward", RopeBackward);
  EXPORT("swigluForward", SwigluForward);
  EXPORT("swigluBackward", SwigluBackward);
  EXPORT("tanhForward", TanhForward);
  EXPORT("tanhBackward", TanhBackward);
  EXPORT("axpy", Axpy);
  EXPORT("sumsq", Sumsq);
  EXPORT("adviseHugePages", AdviseHugePages);
  EXPORT("scale", Scale);
  EXPORT("zero", Zero);
  EXPORT("gatherRows", GatherRows);
  EXPORT("scatterAddRows", ScatterAddRows);
  EXPORT("attentionForward", AttentionForward);
  EXPORT("attentionBackward", AttentionBackward);
  EXPORT("attentionForwardNaive", AttentionForwardNaive);
  EXPORT("attentionBackwardNaive", AttentionBackwardNaive);
  EXPORT("logitsForward", LogitsForward);
  EXPORT("logitsBackward", LogitsBackward);
  EXPORT("adamwUpdate", AdamwUpdate);
  EXPORT("setThreads", SetThreads);
  EXPORT("info", Info);
  EXPORT("gemm", Gemm);
  EXPORT("setPrecision", SetPrecision);
  EXPORT("weightsChanged", WeightsChanged);
  EXPORT("precision", Precision);
  EXPORT("bf16", Bf16);
#undef EXPORT
  RegisterDecodeBindings(env, exports);
  RegisterSampleBindings(env, exports);
  RegisterFileLockBindings(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(maso, Init)
