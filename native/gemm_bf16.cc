// bf16 GEMMs through oneDNN's matmul primitive, behind the process-wide precision switch.
// Only the operands are rounded to bf16 (nearest-even); products accumulate and land in fp32, so a
// bf16 GEMM differs from the fp32 one by operand rounding alone. oneDNN's C API has no bf16 gemm
// function, so products become matmul primitives (milliseconds to create), kept in a small cache:
// one per shape with AMX, one per shape less its row count without (runtime_shapes below).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "kernels.h"
#if MASO_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif
#include "cpu.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if MASO_BF16_KERNELS
#include <immintrin.h>
#endif

namespace maso {

// Per calling thread: a lane (a JS worker thread with its own sampler) sets its model's precision
// without touching the main thread's. gemm() reads it on entry, on the thread that called it.
static thread_local int t_precision = 0;
static thread_local bool t_invariant_rows = false;

void set_precision(int p) { t_precision = p; }
int get_precision() { return t_precision; }
void set_invariant_rows(bool on) { t_invariant_rows = on; }
bool invariant_rows() { return t_invariant_rows; }

// Round-to-nearest-even; NaN stays a (quiet) NaN. Denormal inputs become signed zero, as the
// AVX512-BF16 instruction does, so the scalar and vector paths give the same bits.
uint16_t bf16_round(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

#if MASO_BF16_KERNELS
// The conversion instruction rounds exactly as bf16_round does.
MASO_TARGET_BF16 static int64_t to_bf16_avx512(uint16_t* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512bh r = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i + 16), _mm512_loadu_ps(src + i));
    _mm512_storeu_si512((void*)(dst + i), (__m512i)r);
  }
  for (; i < n; i += 16) {
    const int left = (int)(n - i < 16 ? n - i : 16);
    const __mmask16 m = (__mmask16)((1u << left) - 1u);
    __m256bh r = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src + i));
    _mm256_mask_storeu_epi16((void*)(dst + i), m, (__m256i)r);
  }
  return n;
}
#endif

void to_bf16(uint16_t* dst, const float* src, int64_t n) {
  int64_t i = 0;
#if MASO_BF16_KERNELS
  if (cpu_avx512bf16()) i = to_bf16_avx512(dst, src, n);
#endif
  for (; i < n; i++) dst[i] = bf16_round(src[i]);
}

// Inside an OpenMP region the loop runs on the calling thread.
void pack_bf16(uint16_t* dst, const float* src, int rows, int cols, int ld) {
  const bool big = (int64_t)rows * cols >= (1 << 16);
#pragma omp parallel for schedule(static) if (big)
  for (int r = 0; r < rows; r++) to_bf16(dst + (size_t)r * cols, src + (size_t)r * ld, cols);
}

// __builtin_cpu_supports also checks that the OS saves the zmm state; cpuid alone does not.
// Asked once: the kernels that dispatch on it run per row.
bool cpu_avx512bf16() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return yes;
#else
  return false;
#endif
}

bool cpu_amxbf16() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 22));
#else
  return false;
#endif
}

#if MASO_DNNL

bool has_onednn() { return true; }

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

namespace {

// Converted operands live in buffers owned by the calling thread, grown to the largest call seen.
struct Scratch {
  std::vector<uint16_t> a, b;
  std::vector<uint8_t> pad;
  std::vector<float> wa, wb;  // the emulated path's operands, widened back to fp32
};
thread_local Scratch t_scratch;

dnnl_engine_t cpu_engine() {
  static dnnl_engine_t e = [] {
    dnnl_engine_t x = nullptr;
    if (dnnl_engine_create(&x, dnnl_cpu, 0) != dnnl_success) x = nullptr;
    return x;
  }();
  return e;
}

dnnl_stream_t thread_stream() {
  // one per thread: a CPU stream is cheap, and sharing one across threads is not allowed
  thread_local dnnl_stream_t s = [] {
    dnnl_stream_t x = nullptr;
    if (!cpu_engine() || dnnl_stream_create(&x, cpu_engine(), dnnl_stream_default_flags) != dnnl_success)
      x = nullptr;
    return x;
  }();
  return s;
}

using Key = std::tuple<int, int, int, bool, bool, int, int, float, float>;  // M N K ta tb lda ldc alpha beta

// Without AMX a primitive leaves the row count (rows_dim) to run time, so one serves every batch
// size, and oneDNN runs its gemm:jit kernel. Training's row counts change with every packed batch,
// and creating a shape-specialised (brgemm) primitive for each new count cost 0.3-0.5 ms on a
// 2-core AMD EPYC (Zen 4), more than most of the products it ran; there gemm:jit ran the demo
// model's products at 1800 rows and the 0.5B shape's at 512 as fast as brgemm or faster, and a
// LoRA factor at 176 rows in 30-50 us against 17-33. With AMX, brgemm multiplies in AMX tiles and
// gemm:jit does not: there each shape keeps its own primitive. MASO_ONEDNN_ROWS=shape or =runtime
// overrides the choice, to compare the two on one machine.
bool runtime_shapes() {
  static const bool yes = [] {
    const char* force = std::getenv("MASO_ONEDNN_ROWS");
    if (force && std::strcmp(force, "shape") == 0) return false;
    if (force && std::strcmp(force, "runtime") == 0) return true;
    return !cpu_amxbf16();
  }();
  return yes;
}

// Which size of a product is the row count (tokens) that changes between calls: M of A B and
// A Bᵀ (forward, input gradient), K of Aᵀ B (weight gradient). Strides do not depend on it; with a
// runtime stride oneDNN falls back to its reference kernel.
enum class Rows { none, m, k };
Rows rows_dim(bool ta, bool tb) {
  if (!runtime_shapes()) return Rows::none;
  return !ta ? Rows::m : !tb ? Rows::k : Rows::none;
}

// A's stored rows are lda apart, B is dense in its stored orientation; the strides express the
// transposes. `rt` leaves that size to run time.
bool descs(dnnl_memory_desc_t& a, dnnl_memory_desc_t& b, dnnl_memory_desc_t& c, int M, int N, int K, bool ta, bool tb,
           int lda, int ldc, Rows rt) {
  const dnnl_dim_t m = rt == Rows::m ? DNNL_RUNTIME_DIM_VAL : M, k = rt == Rows::k ? DNNL_RUNTIME_DIM_VAL : K;
  dnnl_dims_t ad = {m, k}, as = {ta ? 1 : lda, ta ? lda : 1};
  dnnl_dims_t bd = {k, N}, bs = {tb ? 1 : N, tb ? K : 1};
  dnnl_dims_t cd = {m, N}, cs = {ldc, 1};
  return dnnl_memory_desc_init_by_strides(&a, 2, ad, dnnl_bf16, as) == dnnl_success &&
         dnnl_memory_desc_init_by_strides(&b, 2, bd, dnnl_bf16, bs) == dnnl_success &&
         dnnl_memory_desc_init_by_strides(&c, 2, cd, dnnl_f32, cs) == dnnl_success;
}

struct Prim {
  dnnl_primitive_t p = nullptr;  // null: oneDNN refused this shape; remembered so we ask once
  dnnl_memory_desc_t a, b, c;
  size_t scratch = 0;
  Prim() = default;
  Prim(const Prim&) = delete;
  Prim& operator=(const Prim&) = delete;
  ~Prim() {
    if (p) dnnl_primitive_destroy(p);
  }
};
using PrimRef = std::shared_ptr<const Prim>;

// Primitives are immutable and the scratchpad is ours (user mode), so one primitive may run on
// several threads at once; the lock only guards the map. A caller holds its own reference while it
// runs the primitive: lanes decoding at once evict each other's shapes, and an evicted primitive
// is destroyed when its last user is done, never under one.
std::mutex g_mu;
std::map<Key, PrimRef> g_cache;
std::deque<Key> g_order;  // insertion order, oldest first: the bound evicts from the front
const size_t CACHE_MAX = 256;

bool make(Prim& out, int M, int N, int K, bool ta, bool tb, int lda, int ldc, float alpha, float beta) {
  dnnl_engine_t eng = cpu_engine();
  if (!eng || !descs(out.a, out.b, out.c, M, N, K, ta, tb, lda, ldc, rows_dim(ta, tb))) return false;
  dnnl_matmul_desc_t md;
  if (dnnl_matmul_desc_init(&md, &out.a, &out.b, nullptr, &out.c) != dnnl_success) return false;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t po = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  bool ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
            dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
  if (ok && alpha != 1.0f) ok = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha) == dnnl_success;
  if (ok && beta != 0.0f) {
    // dst = alpha * A B + beta * dst
    ok = dnnl_post_ops_create(&po) == dnnl_success && dnnl_post_ops_append_sum(po, beta) == dnnl_success &&
         dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  }
  if (ok) ok = dnnl_primitive_desc_create(&pd, &md, attr, eng, nullptr) == dnnl_success;
  if (ok) {
    const dnnl_memory_desc_t* sp = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    out.scratch = sp ? dnnl_memory_desc_get_size(sp) : 0;
    ok = dnnl_primitive_create(&out.p, pd) == dnnl_success;
    if (!ok) out.p = nullptr;
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (po) dnnl_post_ops_destroy(po);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return ok;
}

// The cached primitive for a shape (creating it on first use); null when oneDNN refuses it (or
// memory runs out).
PrimRef lookup(int M, int N, int K, bool ta, bool tb, int lda, int ldc, float alpha, float beta) {
  const Rows rt = rows_dim(ta, tb);
  const Key key{rt == Rows::m ? 0 : M, N, rt == Rows::k ? 0 : K, ta, tb, lda, ldc, alpha, beta};
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_cache.find(key);
  if (it == g_cache.end()) {
    if (g_cache.size() >= CACHE_MAX) {
      g_cache.erase(g_order.front());
      g_order.pop_front();
    }
    try {
      auto p = std::make_shared<Prim>();
      if (!make(*p, M, N, K, ta, tb, lda, ldc, alpha, beta)) p->p = nullptr;
      g_order.push_back(key);
      try {
        it = g_cache.emplace(key, std::move(p)).first;
      } catch (const std::bad_alloc&) {
        g_order.pop_back();
        return nullptr;
      }
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }
  return it->second->p ? it->second : nullptr;
}

void widen_bf16(float* dst, const uint16_t* src, size_t n) {
#pragma omp parallel for schedule(static) if (n >= (1 << 16))
  for (size_t i = 0; i < n; i++) {
    const uint32_t u = (uint32_t)src[i] << 16;
    std::memcpy(dst + i, &u, 4);
  }
}

// Where oneDNN has no bf16 matmul for this CPU (oneDNN 2.6 needs AVX-512), bf16 still means the
// same numbers, computed slowly: the packed bf16 operands widened back to fp32, then the fp32 GEMM.
// Products of bf16 values are exact in fp32, so this differs from oneDNN's result only in
// accumulation order. False (C untouched) when the scratch cannot be had.
bool gemm_emulated(Scratch& s, bool transA, bool transB, int M, int N, int K, float alpha, const uint16_t* abits,
                   int lda, const uint16_t* bbits, float beta, float* C, int ldc) {
  const size_t na = (size_t)M * K, nb = (size_t)K * N;
  try {
    if (s.wa.size() < na) s.wa.resize(na);
    if (s.wb.size() < nb) s.wb.resize(nb);
  } catch (const std::bad_alloc&) {
    return false;
  }
  const int arows = transA ? K : M, acols = transA ? M : K;
  if (lda == acols) widen_bf16(s.wa.data(), abits, na);
  else
    for (int r = 0; r < arows; r++) widen_bf16(s.wa.data() + (size_t)r * acols, abits + (size_t)r * lda, acols);
  widen_bf16(s.wb.data(), bbits, nb);
  gemm_fp32(transA, transB, M, N, K, alpha, s.wa.data(), transA ? M : K, s.wb.data(), transB ? K : N, beta, C, ldc);
  return true;
}

// B's bf16 values in this layout: the weight's cached copy (held in `copy`), else B converted into
// the scratch
const uint16_t* b_bits(Scratch& s, Bf16Copy& copy, bool transB, int N, int K, const float* B, int ldb,
                       Bf16Layout layout = Bf16Layout::rows) {
  const int brows = transB ? N : K, bcols = transB ? K : N;
  if (B == weight_operand()) copy = cached_bf16(B, brows, bcols, ldb, layout);
  if (copy) return bf16_data(layout, copy->data());
  try {
    const size_t need = bf16_copy_size(layout, brows, bcols);
    if (s.b.size() < need) s.b.resize(need);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  pack_bf16_layout(layout, s.b.data(), B, brows, bcols, ldb);
  return bf16_data(layout, s.b.data());
}

// C = alpha op(A) op(B) + beta C over bf16 bits: A's stored rows lda apart, B dense. Through
// oneDNN, else emulated. False (C untouched) when scratch cannot be had.
bool run_bits(Scratch& s, bool transA, bool transB, int M, int N, int K, float alpha, const uint16_t* abits, int lda,
              const uint16_t* bbits, float beta, float* C, int ldc) {
  const PrimRef prim = lookup(M, N, K, transA, transB, lda, ldc, alpha, beta);
  if (!prim) return gemm_emulated(s, transA, transB, M, N, K, alpha, abits, lda, bbits, beta, C, ldc);
  dnnl_stream_t stream = thread_stream();
  if (!stream) return false;
  try {
    if (s.pad.size() < prim->scratch) s.pad.resize(prim->scratch);
  } catch (const std::bad_alloc&) {
    return false;
  }
  dnnl_engine_t eng = cpu_engine();
  dnnl_memory_t ma = nullptr, mb = nullptr, mc = nullptr, ms = nullptr;
  const Prim& pr = *prim;
  // a runtime-shaped primitive runs on memory that says this call's sizes
  dnnl_memory_desc_t a = pr.a, b = pr.b, c = pr.c;
  bool ok = rows_dim(transA, transB) == Rows::none || descs(a, b, c, M, N, K, transA, transB, lda, ldc, Rows::none);
  ok = ok && dnnl_memory_create(&ma, &a, eng, const_cast<uint16_t*>(abits)) == dnnl_success &&
       dnnl_memory_create(&mb, &b, eng, const_cast<uint16_t*>(bbits)) == dnnl_success &&
       dnnl_memory_create(&mc, &c, eng, C) == dnnl_success;
  int nargs = 3;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}, {DNNL_ARG_SCRATCHPAD, nullptr}};
  if (ok && pr.scratch > 0) {
    dnnl_memory_desc_t sd;
    dnnl_dims_t dims = {(dnnl_dim_t)pr.scratch};
    ok = dnnl_memory_desc_init_by_tag(&sd, 1, dims, dnnl_u8, dnnl_a) == dnnl_success &&
         dnnl_memory_create(&ms, &sd, eng, s.pad.data()) == dnnl_success;
    args[3].memory = ms;
    nargs = 4;
  }
  if (ok) ok = dnnl_primitive_execute(pr.p, stream, nargs, args) == dnnl_success;
  if (ok) ok = dnnl_stream_wait(stream) == dnnl_success;
  for (dnnl_memory_t m : {ma, mb, mc, ms})
    if (m) dnnl_memory_destroy(m);
  // oneDNN checks its arguments before it computes, so a refusal leaves C as it was for the fp32 path
  return ok;
}

// A B^T through the row-invariant kernel, B in the layout it reads. False (C untouched) when it
// cannot run.
bool gemm_nt_invariant(Scratch& s, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                       int ldb, float beta, float* C, int ldc) {
  Bf16Copy copy;
  const uint16_t* w = b_bits(s, copy, true, N, K, B, ldb, gemm_nt_layout(K));
  return w && gemm_nt_bf16(M, N, K, alpha, A, lda, w, beta, C, ldc);
}

}  // namespace

bool gemm_bf16(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0 || K <= 0) return false;
  Scratch& s = t_scratch;
  // A B^T, the sampler's products against weights: the row-invariant kernel (gemm_nt_bf16.cc)
  if (t_invariant_rows && !transA && transB && cpu_avx512bf16() && gemm_nt_invariant(s, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))
    return true;
  Bf16Copy copy;  // stored A is (M,K) or, transposed, (K,M); likewise B is (K,N) or (N,K)
  const uint16_t* bbits = b_bits(s, copy, transB, N, K, B, ldb);
  if (!bbits) return false;
  try {
    if (s.a.size() < (size_t)M * K) s.a.resize((size_t)M * K);
  } catch (const std::bad_alloc&) {
    return false;  // the fp32 path needs no scratch of ours
  }
  pack_bf16(s.a.data(), A, transA ? K : M, transA ? M : K, lda);
  return run_bits(s, transA, transB, M, N, K, alpha, s.a.data(), transA ? M : K, bbits, beta, C, ldc);
}

bool gemm_bf16_a(bool transA, bool transB, int M, int N, int K, float alpha, const uint16_t* A, int lda,
                 const float* B, int ldb, float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0 || K <= 0) return false;
  Scratch& s = t_scratch;
  Bf16Copy copy;
  const uint16_t* bbits = b_bits(s, copy, transB, N, K, B, ldb);
  return bbits && run_bits(s, transA, transB, M, N, K, alpha, A, lda, bbits, beta, C, ldc);
}

bool gemm_bf16_bits(bool transA, bool transB, int M, int N, int K, float alpha, const uint16_t* A, int lda,
                    const uint16_t* B, float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0 || K <= 0) return false;
  return run_bits(t_scratch, transA, transB, M, N, K, alpha, A, lda, B, beta, C, ldc);
}

bool gemm_bf16_parts(int M, int K, const float* A, const LinearPart* parts, int count) {
  if (!t_invariant_rows || !cpu_avx512bf16() || M <= 0 || K <= 0 || count > kMaxParts) return false;
  Bf16Copy copies[kMaxParts];
  NtPart nt[kMaxParts];
  const Bf16Layout layout = gemm_nt_layout(K);
  for (int p = 0; p < count; p++) {
    copies[p] = cached_bf16(parts[p].weight, parts[p].OC, K, K, layout);
    if (!copies[p]) return false;  // one that does not fit the cache: each part converts its own
    nt[p] = {bf16_data(layout, copies[p]->data()), parts[p].OC, parts[p].out, parts[p].OC};
  }
  return gemm_nt_bf16_parts(M, K, 1.0f, A, K, nt, count, 0.0f);
}

#else

bool has_onednn() { return false; }
std::string onednn_version() { return ""; }
bool gemm_bf16(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) {
  return false;
}
bool gemm_bf16_a(bool, bool, int, int, int, float, const uint16_t*, int, const float*, int, float, float*, int) {
  return false;
}
bool gemm_bf16_bits(bool, bool, int, int, int, float, const uint16_t*, int, const uint16_t*, float, float*, int) {
  return false;
}
bool gemm_bf16_parts(int, int, const float*, const LinearPart*, int) { return false; }

#endif

}  // namespace maso
