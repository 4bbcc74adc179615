// maso native kernels: every op is an <op>_forward / <op>_backward pair with matching arguments
// (outputs, then what backward needs saved, then inputs, weights, sizes). Kernels validate nothing:
// addon.cc checks every buffer length before a call, so the TypeScript side can never segfault us.
//
// Dimension letters used in shape comments across native/:
//   N   packed tokens in a batch (sum of sequence lengths)     B   sequences in a batch
//   C   hidden size        F   MLP intermediate size            V   vocabulary size
//   NH  query heads        KVH key/value heads                  HS  head size
//   M   scored rows (tokens whose log-prob is asked for)        R   LoRA rank
//
// Convention (llm.c): parameter gradients accumulate (+=); activations are overwritten (=);
// input gradients accumulate (+=) so residual branches can add into one buffer.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace maso {

// ---- GEMM dispatch (CBLAS when linked, portable blocked kernel otherwise) ----------------------
// C[M,N] = alpha * op(A) op(B) + beta * C, row-major, op = transpose when trans* is true.
void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc);
// gemm() at fp32 whatever the precision switch says (what the bf16 paths fall back to).
void gemm_fp32(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc);
void gemm_naive(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc);
const char* gemm_name();
// C = alpha A B^T + beta C on the calling thread without packing B, for few rows of A (decode
// steps); every element summed in an order fixed by K. AVX-512, AVX2 or (the x86-64 baseline) SSE;
// false (C untouched) off x86, where gemm() keeps the BLAS.
bool gemm_nt_rows(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                  float beta, float* C, int ldc);

// ---- bf16 GEMMs (native/gemm_bf16.cc) -----------------------------------------------------------
// Process-wide precision of gemm(): 0 fp32, 1 bf16 operands with fp32 accumulation and output.
void set_precision(int p);
int get_precision();
// Whether products against a weight must be row-invariant (bf16: gemm_nt_bf16, fp32:
// gemm_nt_rows at every M): on for the sampler, whose batches mix sequences as they arrive; off for
// training, whose batches are fixed and whose large products run faster through oneDNN or the
// BLAS. Per calling thread, like the precision.
void set_invariant_rows(bool on);
bool invariant_rows();
// gemm() with operands rounded to bf16: through oneDNN, or emulated (rounded operands, fp32 GEMM)
// where oneDNN has no bf16 matmul for this CPU; false (C untouched) when oneDNN is not linked or
// scratch cannot be had, and the caller computes in fp32.
bool gemm_bf16(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc);
// gemm_bf16 with A given as bf16 bits (stored rows lda apart); false (C untouched) where gemm_bf16
// would fall back to fp32, and the caller then widens A itself
bool gemm_bf16_a(bool transA, bool transB, int M, int N, int K, float alpha, const uint16_t* A, int lda,
                 const float* B, int ldb, float beta, float* C, int ldc);
// ... and with B given as dense bf16 bits too
bool gemm_bf16_bits(bool transA, bool transB, int M, int N, int K, float alpha, const uint16_t* A, int lda,
                    const uint16_t* B, float beta, float* C, int ldc);
// dst (n) = src rounded to bf16 bits, nearest-even (denormals flush to signed zero)
void to_bf16(uint16_t* dst, const float* src, int64_t n);
// dst = the (rows, cols) matrix at src with leading dimension ld, as dense bf16 (rows x cols)
void pack_bf16(uint16_t* dst, const float* src, int rows, int cols, int ld);
// Holds gemm() at fp32 for a scope (restoring the precision after): the LM head's backward runs
// the products no bf16 path could take at fp32 (native/logits.cc).
struct Fp32Gemms {
  int saved = get_precision();
  Fp32Gemms() { set_precision(0); }
  ~Fp32Gemms() { set_precision(saved); }
  Fp32Gemms(const Fp32Gemms&) = delete;
  Fp32Gemms& operator=(const Fp32Gemms&) = delete;
};
// A bf16 GEMM whose B operand is the weight marked by the innermost WeightOperand scope of this
// thread uses a cached bf16 copy of it (native/bf16_weights.cc) instead of converting it again.
struct WeightOperand {
  const float* prev;
  explicit WeightOperand(const float* w);
  ~WeightOperand();
  WeightOperand(const WeightOperand&) = delete;
  WeightOperand& operator=(const WeightOperand&) = delete;
};
const float* weight_operand();
// ---- memory (native/memory.cc) ------------------------------------------------------------------
// Advises the kernel to back the whole 2 MiB pages inside [p, p + bytes) with transparent huge pages
// (before they are first touched: pages already faulted in stay as they are); returns the bytes
// advised, 0 for a buffer under 4 MiB, off Linux or where the kernel refuses.
size_t advise_huge_pages(const void* p, size_t bytes);
// std::allocator, with large allocations advised as above before the container fills them.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    T* p = std::allocator<T>{}.allocate(n);
    advise_huge_pages(p, n * sizeof(T));
    return p;
  }
  void deallocate(T* p, size_t n) { std::allocator<T>{}.deallocate(p, n); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};
// The storage of a cached bf16 copy of a weight.
using Bf16Bits = std::vector<uint16_t, HugePageAllocator<uint16_t>>;

// How a bf16 copy of a (rows, cols) matrix is laid out. rows: dense rows. panels (the row-invariant
// AVX512-BF16 kernel's operand): 16 rows at a time, each panel holding, for every pair of columns
// (2q, 2q+1), the 16 rows' two values side by side (64 bytes); rows past the last and the odd
// column's partner are zero, and the copy's data starts 64-byte aligned (bf16_data).
enum class Bf16Layout { rows, panels };
// uint16 elements a copy in this layout needs (panels: with room to align its start)
size_t bf16_copy_size(Bf16Layout layout, int rows, int cols);
// where a copy's values start: panels are read in 64-byte rows, so they start on a cache line
const uint16_t* bf16_data(Bf16Layout layout, const uint16_t* storage);
// dst (bf16_copy_size elements) = the (rows, cols) matrix at src (leading dimension ld) in this layout
void pack_bf16_layout(Bf16Layout layout, uint16_t* dst, const float* src, int rows, int cols, int ld);
// the bf16 copy of the stored (rows, cols) matrix at w with leading dimension ld, in this layout,
// kept alive for as long as the caller holds it; null when it does not fit the cache (the caller
// converts into scratch). Its values start at bf16_data(layout, copy->data()).
using Bf16Copy = std::shared_ptr<const Bf16Bits>;
Bf16Copy cached_bf16(const float* w, int rows, int cols, int ld, Bf16Layout layout = Bf16Layout::rows);
// The layout gemm_nt_bf16 wants its W in for this K: rows for the AMX kernel, panels otherwise.
Bf16Layout gemm_nt_layout(int K);
// C (M, N) = alpha * A W^T (+ beta C) with W the bf16 values of an (N, K) matrix in the layout
// gemm_nt_layout(K) names (from bf16_data), A rounded to bf16; each element summed in an order fixed
// by K alone (any M, any row, any thread count gives the same bits). False (C untouched) where the
// CPU lacks AVX512-BF16 or scratch cannot be had.
bool gemm_nt_bf16(int M, int N, int K, float alpha, const float* A, int lda, const uint16_t* W, float beta,
                  float* C, int ldc);
// One part of a product whose parts share their A: C (M, N) = alpha A W^T + beta C, W as above
struct NtPart {
  const uint16_t* W;
  int N;
  float* C;
  int ldc;
};
constexpr int kMaxParts = 4;
// gemm_nt_bf16 over up to kMaxParts weights at once (q/k/v, gate/up): A converted once, one
// parallel region, each part's elements the same bits as its own gemm_nt_bf16 call
bool gemm_nt_bf16_parts(int M, int K, float alpha, const float* A, int lda, const NtPart* parts, int count, float beta);
// which kernel gemm_nt_bf16 runs: "amx", "avx512bf16" or "none"
const char* gemm_nt_bf16_kernel();
// weights were written in place: every cached copy is outdated (AdamW updates call it themselves)
void weights_changed();
// The dense-rows bf16 copies of the weights in [base, base + n) that an update in place writes as it
// goes (adamw_update), so the next GEMM finds them current instead of reading every weight again to
// convert it. Construct after weights_changed(); write() each written range; the destructor marks
// the copies current. A copy another thread reads, or one overlapping another, is left to convert
// on first use as before.
class Bf16Refresh {
 public:
  Bf16Refresh(const float* base, int64_t n);
  ~Bf16Refresh();
  Bf16Refresh(const Bf16Refresh&) = delete;
  Bf16Refresh& operator=(const Bf16Refresh&) = delete;
  // the copies' values for base[i0, i1), rounded from what is there now
  void write(const float* base, int64_t i0, int64_t i1) const;

 private:
  struct Span {
    int64_t begin, end;  // elements from base
    const float* w;
    int rows, cols;
    std::shared_ptr<Bf16Bits> bits;
  };
  std::vector<Span> spans;  // sorted, disjoint
  uint64_t epoch = 0;
};
bool has_onednn();
std::string onednn_version();  // "" when not linked

// ---- linear layer: out = inp @ weight^T + bias ------------------------------------------------
// out (N,OC) = or += (accumulate); inp (N,IC); weight (OC,IC); bias (OC) or null
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N,
                    int IC, int OC, bool accumulate);
void matmul_forward_naive(float* out, const float* inp, const float* weight, const float* bias,
                          int N, int IC, int OC, bool accumulate);
// Projections of one input (q/k/v, gate/up): out_p (N,OC_p) = inp @ weight_p^T + bias_p. The
// sampler's bf16 products run as one (gemm_nt_bf16_parts); elsewhere each part is its own product.
struct LinearPart {
  float* out;
  const float* weight;
  const float* bias;  // or null
  int OC;
};
void matmul_forward_parts(const LinearPart* parts, int count, const float* inp, int N, int IC);
// One adapter's LoRA of projections that read the same input rows (q/k/v, gate/up)
struct LoraPart {
  float* out;  // (N, OC): += u B^T
  float* u;    // (N, R): scale * x A^T, kept for the backward
  const float* A;  // (R, IC)
  const float* B;  // (OC, R)
  int OC;
};
void lora_forward_parts(const LoraPart* parts, int count, const float* inp, int N, int IC, int R, float scale);
// the sampler's bf16 path of matmul_forward_parts, without biases; false where it does not apply
bool gemm_bf16_parts(int M, int K, const float* A, const LinearPart* parts, int count);
// dinp (N,IC) +=, dweight (OC,IC) +=, dbias (OC) += ; any may be null
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int IC, int OC);

// ---- elementwise / normalisation ---------------------------------------------------------------
// out (N,C) = wte[ids[n]]
void embedding_forward(float* out, const int32_t* ids, const float* wte, int N, int C);
// dwte (V,C) += scattered dout (N,C)
void embedding_backward(float* dwte, const float* dout, const int32_t* ids, int N, int C);

// out (N,C) = inp * rstd * weight ; rstd (N) saved for backward
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                     float eps);
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int N, int C);

// HF "rotate_half" rotary embedding, in place allowed. x (N,H,HS); pos (N)
void rope_forward(float* out, const float* inp, const int32_t* pos, int N, int H, int HS,
                  float theta);
void rope_backward(float* dinp, const float* dout, const int32_t* pos, int N, int H, int HS,
                   float theta);

// out (N,F) = silu(gate) * up
void swiglu_forward(float* out, const float* gate, const float* up, int N, int F);
// dgate, dup (N,F) =  (overwritten)
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int N, int F);

// out (n) = tanh(inp)
void tanh_forward(float* out, const float* inp, int64_t n);
// dinp += dout * (1 - out^2)
void tanh_backward(float* dinp, const float* dout, const float* out, int64_t n);

// y (n) += alpha * x
void axpy(float* y, const float* x, float alpha, int64_t n);
// sum of squares in double, for global gradient-norm clipping
double sumsq(const float* x, int64_t n);
// x *= s
void scale(float* x, float s, int64_t n);
// x = 0 (gradients before a backward: gigabytes at the 0.5B shape, split over the pool)
void zero(float* x, int64_t n);
// dst[r] = src[rows[r]] for r < M ; rows of width C
void gather_rows(float* dst, const float* src, const int32_t* rows, int M, int C);
// dst[rows[r]] += src[r]
void scatter_add_rows(float* dst, const float* src, const int32_t* rows, int M, int C);

// ---- causal attention over packed sequences ----------------------------------------------------
// q, out (N,NH,HS); k, v (N,KVH,HS); lse (N,NH) saved; starts (B+1) sequence offsets into N.
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const int32_t* starts, int B, int NH, int KVH, int HS);
void attention_forward_naive(float* out, float* lse, const float* q, const float* k, const float* v,
                             const int32_t* starts, int B, int NH, int KVH, int HS);
// dq (N,NH,HS) +=, dk dv (N,KVH,HS) +=
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out,
                        const float* lse, const float* q, const float* k, const float* v,
                        const int32_t* starts, int B, int NH, int KVH, int HS);
void attention_backward_naive(float* dq, float* dk, float* dv, const float* dout, const float* out,
                              const float* lse, const float* q, const float* k, const float* v,
                              const int32_t* starts, int B, int NH, int KVH, int HS);

// ---- LM head fused with per-token log-prob and entropy -----------------------------------------
// For M scored rows of hidden (M,C): z = hidden @ wte^T * invTemp (V); logp[m] = log softmax(z)[target[m]],
// entropy[m] = H(softmax z), lse[m] saved. logits (M,V) or null: when given, z is kept for backward,
// otherwise backward recomputes it chunk by chunk (no M x V buffer ever needed).
void logits_forward(float* logp, float* entropy, float* lse, float* logits, const float* hidden,
                    const float* wte, const int32_t* targets, int M, int C, int V, float invTemp);
// dhidden (M,C) +=, dwte (V,C) += (may be null): from dlogp, dentropy (M). Kept logits (may be
// null) are consumed: the gradient w.r.t. them is computed in their place.
void logits_backward(float* dhidden, float* dwte, const float* dlogp, const float* dentropy,
                     float* logits, const float* lse, const float* entropy,
                     const float* hidden, const float* wte, const int32_t* targets, int M, int C,
                     int V, float invTemp);

// ---- optimiser -----------------------------------------------------------------------------------
// AdamW with decoupled weight decay; m, v moments (n); bc1 = 1-beta1^t, bc2 = 1-beta2^t
void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n, float lr,
                  float beta1, float beta2, float eps, float weightDecay, float bc1, float bc2);

// ---- threads -----------------------------------------------------------------------------------
void set_threads(int n);
int get_threads();
bool has_openmp();
const char* blas_config();

}  // namespace maso
