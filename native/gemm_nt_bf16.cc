// Row-invariant bf16 products C = alpha A W^T + beta C, W a bf16 (N, K) (a weight's cached copy,
// or B converted into scratch). Every element of C is summed in an order fixed by K alone: not by
// M, not by the row's place among the M rows, not by the thread count. The sampler decodes
// whichever sequences are ready at once and prefills a prompt's tokens together, so without this a
// token's logits would depend on what else was in its batch; in bf16 a last-bit difference changes
// the rounding of the next product's operands and grows into a different sampled token.
//
// Two kernels, one per CPU, chosen by the CPU and the shape (never by M):
//  - AMX (K a multiple of 32): 16x16 output tiles, each the sum over K in 32-wide steps of one
//    tile multiply; W rows are the tile rows, A is packed as the pair-interleaved operand.
//  - AVX512-BF16 otherwise: W in panels (kernels.h, Bf16Layout), each lane of an accumulator one
//    element of C, summed over K one pair of values at a time in order; no fold across lanes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "cpu.h"
#include "kernels.h"
#include "vec.h"
#if MASO_BF16_KERNELS
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace maso {

// ---- bf16 layouts (kernels.h) -------------------------------------------------------------------
constexpr int PANEL = 16;  // rows of W per panel: one accumulator's lanes in the AVX512-BF16 kernel
namespace {
constexpr size_t kAlign = 32;  // uint16 elements in 64 bytes
size_t panel_elems(int rows, int cols) { return (size_t)((rows + PANEL - 1) / PANEL) * ((cols + 1) / 2) * 2 * PANEL; }
}  // namespace

size_t bf16_copy_size(Bf16Layout layout, int rows, int cols) {
  return layout == Bf16Layout::rows ? (size_t)rows * cols : panel_elems(rows, cols) + kAlign;
}

const uint16_t* bf16_data(Bf16Layout layout, const uint16_t* storage) {
  if (layout == Bf16Layout::rows) return storage;
  const uintptr_t p = reinterpret_cast<uintptr_t>(storage);
  return storage + ((64 - p % 64) % 64) / sizeof(uint16_t);  // storage is at least 2-byte aligned
}

#if MASO_BF16_KERNELS
MASO_TARGET_BF16 void pack_panels(uint16_t* dst, const float* src, int rows, int cols, int ld);
#endif

// Panel p, pair q holds rows 16 p .. 16 p + 15, each as (value 2q, value 2q + 1), rounded as
// pack_bf16 rounds. Only the AVX512-BF16 kernel reads panels, so only a CPU that runs it packs them.
void pack_bf16_layout(Bf16Layout layout, uint16_t* dst, const float* src, int rows, int cols, int ld) {
  if (layout == Bf16Layout::rows) {
    pack_bf16(dst, src, rows, cols, ld);
    return;
  }
#if MASO_BF16_KERNELS
  if (cpu_avx512bf16()) pack_panels(const_cast<uint16_t*>(bf16_data(layout, dst)), src, rows, cols, ld);
#endif
}

#if MASO_BF16_KERNELS

namespace {

// MASO_BF16_KERNEL=avx512 keeps the AVX512-BF16 kernel on an AMX CPU (to test it there)
bool amx_ready() {
  static const bool ok = [] {
    const char* force = std::getenv("MASO_BF16_KERNEL");
    if (force && std::strcmp(force, "avx512") == 0) return false;
    if (!cpu_amxbf16() || !cpu_avx512bf16()) return false;
    // Linux hands out the tile registers' state only to a process that asks (ARCH_REQ_XCOMP_PERM
    // for XTILEDATA); without it the first tile instruction faults
    return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
  }();
  return ok;
}

// ---- AMX ----------------------------------------------------------------------------------------
#define MASO_TARGET_AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))

struct TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

// tiles 0-1: W blocks (16 rows of W, 32 k); 2-3: A blocks (16 k-pairs, 16 rows of A, interleaved);
// 4-7: fp32 outputs (16 rows of W by 16 rows of A). A constant in memory: GCC 12 does not see that
// the load-config builtin reads its argument, and drops the stores that would fill a local one.
alignas(64) const TileConfig kTiles = {1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

MASO_TARGET_AMX void amx_configure() { _tile_loadconfig(&kTiles); }

constexpr int TILE = 16;
constexpr int KSTEP = 32;
constexpr int TILE_ELEMS = TILE * KSTEP;  // bf16 values in one packed A block

// acc[i] (16x16, [w row][a row]) += the tiles of w blocks w0 (, w1) by A blocks x0 (, x1) over
// `steps` steps of K; fresh: acc starts at zero instead. Partial sums go through memory exactly
// (fp32 tile stores and loads), so a K cut into chunks sums in the same order as one pass.
template <int NW, int NA>
MASO_TARGET_AMX void amx_block(const uint16_t* w0, const uint16_t* w1, int ldw, const uint16_t* x0,
                               const uint16_t* x1, int steps, bool fresh, float (*acc)[TILE * TILE]) {
  if (fresh) {
    _tile_zero(4);
    if (NW > 1) _tile_zero(5);
    if (NA > 1) _tile_zero(6);
    if (NW > 1 && NA > 1) _tile_zero(7);
  } else {
    _tile_loadd(4, acc[0], 64);
    if (NW > 1) _tile_loadd(5, acc[1], 64);
    if (NA > 1) _tile_loadd(6, acc[2], 64);
    if (NW > 1 && NA > 1) _tile_loadd(7, acc[3], 64);
  }
  const int stride = ldw * 2;
  for (int s = 0; s < steps; s++) {
    _tile_loadd(0, w0 + s * KSTEP, stride);
    if (NW > 1) _tile_loadd(1, w1 + s * KSTEP, stride);
    _tile_loadd(2, x0 + s * TILE_ELEMS, 64);
    if (NA > 1) _tile_loadd(3, x1 + s * TILE_ELEMS, 64);
    _tile_dpbf16ps(4, 0, 2);
    if (NW > 1) _tile_dpbf16ps(5, 1, 2);
    if (NA > 1) _tile_dpbf16ps(6, 0, 3);
    if (NW > 1 && NA > 1) _tile_dpbf16ps(7, 1, 3);
  }
  _tile_stored(4, acc[0], 64);
  if (NW > 1) _tile_stored(5, acc[1], 64);
  if (NA > 1) _tile_stored(6, acc[2], 64);
  if (NW > 1 && NA > 1) _tile_stored(7, acc[3], 64);
}

MASO_TARGET_AMX void amx_release() { _tile_release(); }

// r[i] (i < 16) = column i of the 16x16 matrix whose rows were r[0..15]: lanes of 32 bits each
MASO_TARGET_BF16 inline void transpose16(__m512* r) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; i++) {  // per 128-bit lane: elements 0,1 then 2,3 of rows 2i, 2i+1 interleaved
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; g++) {  // u[4g + c], lane L: element 4L + c of rows 4g .. 4g+3
    u[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xee);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xee);
  }
  for (int c = 0; c < 4; c++) {  // gather lane L of the four groups into row 4L + c
    const __m512 even01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), even23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    const __m512 odd01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd), odd23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
    r[c] = _mm512_shuffle_f32x4(even01, even23, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(even01, even23, 0xdd);
    r[4 + c] = _mm512_shuffle_f32x4(odd01, odd23, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(odd01, odd23, 0xdd);
  }
}

}  // namespace

// 16 rows by 16 pairs at a time: a row's 32 values rounded to 16 pairs (one 32-bit lane each), then
// the 16x16 transpose turns the rows' lanes into the panel's 64-byte rows. Past the last row or
// column the masked loads give zeros. Also the AMX kernel's A operand: with K a multiple of 32, a
// panel's 16 pairs starting at a multiple of 16 are the A tile of one 32-wide step of K.
MASO_TARGET_BF16 void pack_panels(uint16_t* dst, const float* src, int rows, int cols, int ld) {
  const int pairs = (cols + 1) / 2, panels = (rows + PANEL - 1) / PANEL, chunks = (pairs + 15) / 16;
#pragma omp parallel for schedule(static) if (pays((int64_t)rows * cols))
  for (int task = 0; task < panels * chunks; task++) {
    const int p = task / chunks, c = task % chunks, k0 = 32 * c;
    const __mmask16 lo = (__mmask16)(k0 >= cols ? 0 : cols - k0 >= 16 ? 0xffff : (1u << (cols - k0)) - 1u);
    const __mmask16 hi = (__mmask16)(k0 + 16 >= cols ? 0 : cols - k0 - 16 >= 16 ? 0xffff : (1u << (cols - k0 - 16)) - 1u);
    __m512 r[PANEL];
    for (int l = 0; l < PANEL; l++) {
      const int n = p * PANEL + l;
      if (n >= rows) {
        r[l] = _mm512_setzero_ps();
        continue;
      }
      const float* row = src + (size_t)n * ld + k0;
      r[l] = (__m512)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, row + 16), _mm512_maskz_loadu_ps(lo, row));
    }
    transpose16(r);
    float* d = reinterpret_cast<float*>(dst + ((size_t)p * pairs + 16 * c) * 2 * PANEL);
    for (int j = 0; j < 16 && 16 * c + j < pairs; j++) _mm512_storeu_ps(d + j * PANEL, r[j]);
  }
}

namespace {

// C rows m0.. (mm of them), columns n0.. (nn) = alpha * the tile (stored [column][row]) + beta C
MASO_TARGET_BF16 void store_tile(const float* tile, int mm, int nn, float alpha, float beta, float* C, int ldc) {
  __m512 r[TILE];
  for (int j = 0; j < TILE; j++) r[j] = _mm512_load_ps(tile + j * TILE);
  transpose16(r);
  const __mmask16 cols = (__mmask16)((1u << nn) - 1u);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int i = 0; i < mm; i++) {
    float* c = C + (size_t)i * ldc;
    __m512 v = _mm512_mul_ps(va, r[i]);
    if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(cols, c), v);
    _mm512_mask_storeu_ps(c, cols, v);
  }
}

// one pair of A blocks' four output tiles, kept between chunks of K
struct alignas(64) AccPair {
  float t[4][TILE * TILE];
};
constexpr int CHUNK = 8;  // steps of K per chunk: 256 values of K

struct AmxScratch {
  std::vector<uint16_t> a;     // A in pair-interleaved blocks
  std::vector<uint16_t> tail;  // per part, its last, partial block of W rows, zero-padded to 16
  std::vector<AccPair> acc;    // per pool thread, one AccPair per pair of A blocks
};
thread_local AmxScratch t_amx;

// the part holding task t of a list whose part p starts at first[p]; t becomes the part's own index
int part_of(const int* first, int count, int& t) {
  int p = 0;
  while (p + 1 < count && t >= first[p + 1]) p++;
  t -= first[p];
  return p;
}

bool gemm_nt_amx(int M, int K, float alpha, const float* A, int lda, const NtPart* parts, int count, float beta) {
  const int ablocks = (M + TILE - 1) / TILE, steps = K / KSTEP;
  const int pairs = (ablocks + 1) / 2;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  AmxScratch& s = t_amx;
  try {  // all scratch before any work, so that a refusal leaves C untouched
    if (s.a.size() < (size_t)ablocks * steps * TILE_ELEMS) s.a.resize((size_t)ablocks * steps * TILE_ELEMS);
    if (s.tail.size() < (size_t)count * TILE * K) s.tail.resize((size_t)count * TILE * K);
    if (s.acc.size() < (size_t)threads * pairs) s.acc.resize((size_t)threads * pairs);
  } catch (const std::bad_alloc&) {
    return false;
  }
  // A's blocks of 16 rows by 16 pairs are its panels (K a multiple of 32: no padding)
  pack_panels(s.a.data(), A, M, K, lda);
  int first[kMaxParts + 1] = {0};  // each part's first task: two W blocks (32 rows of W) each
  int64_t total_n = 0;
  for (int p = 0; p < count; p++) {
    const NtPart& q = parts[p];
    const int rest = q.N % TILE;
    if (rest) {
      uint16_t* tail = s.tail.data() + (size_t)p * TILE * K;
      std::memcpy(tail, q.W + (size_t)(q.N - rest) * K, sizeof(uint16_t) * rest * K);
      std::memset(tail + (size_t)rest * K, 0, sizeof(uint16_t) * (TILE - rest) * K);
    }
    first[p + 1] = first[p] + ((q.N + TILE - 1) / TILE + 1) / 2;
    total_n += q.N;
  }
  const uint16_t* xa = s.a.data();
  const int tasks = first[count];
  // Over many rows of A, K runs in chunks of CHUNK steps: a task's 32 rows of W for one chunk
  // (16 KB) stay in L1 while every row of A passes, instead of being re-read from L2 per pair
  const int chunk = pairs > 1 ? CHUNK : steps;
#pragma omp parallel if (pays((int64_t)M * total_n * K / 8) && tasks > 1)
  {
    amx_configure();
    int me = 0;
#ifdef _OPENMP
    me = omp_get_thread_num();
#endif
    AccPair* acc = s.acc.data() + (size_t)me * pairs;
#pragma omp for schedule(static)
    for (int task = 0; task < tasks; task++) {
      int t = task;
      const int p = part_of(first, count, t);
      const NtPart& q = parts[p];
      const uint16_t* tail = s.tail.data() + (size_t)p * TILE * K;
      const int wblocks = (q.N + TILE - 1) / TILE;
      const int b0 = 2 * t, nw = std::min(2, wblocks - b0);
      const uint16_t* w[2];
      for (int i = 0; i < nw; i++) w[i] = (b0 + i + 1) * TILE <= q.N ? q.W + (size_t)(b0 + i) * TILE * K : tail;
      for (int s0 = 0; s0 < steps; s0 += chunk) {
        const int ns = std::min(chunk, steps - s0);
        for (int p2 = 0; p2 < pairs; p2++) {
          const int na = std::min(2, ablocks - 2 * p2);
          const uint16_t* x0 = xa + ((size_t)2 * p2 * steps + s0) * TILE_ELEMS;
          const uint16_t* x1 = x0 + (size_t)steps * TILE_ELEMS;
          const uint16_t* v0 = w[0] + s0 * KSTEP;
          const uint16_t* v1 = w[nw - 1] + s0 * KSTEP;
          if (nw == 2 && na == 2) amx_block<2, 2>(v0, v1, K, x0, x1, ns, s0 == 0, acc[p2].t);
          else if (nw == 2) amx_block<2, 1>(v0, v1, K, x0, x1, ns, s0 == 0, acc[p2].t);
          else if (na == 2) amx_block<1, 2>(v0, v1, K, x0, x1, ns, s0 == 0, acc[p2].t);
          else amx_block<1, 1>(v0, v1, K, x0, x1, ns, s0 == 0, acc[p2].t);
        }
      }
      // acc[p2].t[i]: w block (i & 1) by A block 2 p2 + (i >> 1), stored [w row][a row]
      for (int p2 = 0; p2 < pairs; p2++)
        for (int i = 0; i < 4; i++) {
          const int bw = b0 + (i & 1), ba = 2 * p2 + (i >> 1);
          if ((i & 1) >= nw || ba >= ablocks) continue;
          const int n0 = bw * TILE, m0 = ba * TILE;
          store_tile(acc[p2].t[i], std::min(TILE, M - m0), std::min(TILE, q.N - n0), alpha, beta, q.C + (size_t)m0 * q.ldc + n0, q.ldc);
        }
    }
    amx_release();
  }
  return true;
}

// ---- AVX512-BF16 --------------------------------------------------------------------------------

// RA rows of A by NV panels of W (16 NV columns of C). acc[i][v] lane l sums element (i, 16 v + l)
// over the pairs of K in order: each step broadcasts one pair of a row of A against one 64-byte
// row of each panel, so the accumulators never need folding. The last panel's columns past
// `cols` are padding: computed, never stored.
template <int RA, int NV>
MASO_TARGET_BF16 void panel_block(const uint16_t* a, int lda, const uint16_t* w, size_t pstride, int pairs,
                                  float alpha, float beta, float* C, int ldc, int cols) {
  __m512 acc[RA][NV];
  for (int i = 0; i < RA; i++)
    for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
  for (int q = 0; q < pairs; q++) {
    __m512bh wv[NV];
    for (int v = 0; v < NV; v++) wv[v] = (__m512bh)_mm512_loadu_si512(w + v * pstride + (size_t)q * 2 * PANEL);
    for (int i = 0; i < RA; i++) {
      int32_t pair;
      std::memcpy(&pair, a + (size_t)i * lda + 2 * q, sizeof pair);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
      for (int v = 0; v < NV; v++) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, wv[v]);
    }
  }
  // alpha times the sum, rounded, then beta C added in one rounding
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int v = 0; v < NV; v++) {
    const int n = std::min(PANEL, cols - v * PANEL);
    const __mmask16 m = (__mmask16)((1u << n) - 1u);
    for (int i = 0; i < RA; i++) {
      float* c = C + (size_t)i * ldc + v * PANEL;
      __m512 r = _mm512_mul_ps(va, acc[i][v]);
      if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, c), r);
      _mm512_mask_storeu_ps(c, m, r);
    }
  }
}

using PanelBlock = void (*)(const uint16_t*, int, const uint16_t*, size_t, int, float, float, float*, int, int);

template <int RA>
PanelBlock panel_block_for(int nv) {
  switch (nv) {
    case 1: return panel_block<RA, 1>;
    case 2: return panel_block<RA, 2>;
    case 3: return panel_block<RA, 3>;
    default: return panel_block<RA, 4>;
  }
}

PanelBlock panel_block_for(int ra, int nv) {
  switch (ra) {
    case 1: return panel_block_for<1>(nv);
    case 2: return panel_block_for<2>(nv);
    case 3: return panel_block_for<3>(nv);
    case 4: return panel_block_for<4>(nv);
    case 5: return panel_block_for<5>(nv);
    default: return panel_block_for<6>(nv);
  }
}

thread_local std::vector<uint16_t> t_rows;  // A as bf16 rows of an even length (a zero pads odd K)

bool gemm_nt_panels(int M, int K, float alpha, const float* A, int lda, const NtPart* parts, int count, float beta) {
  const int pairs = (K + 1) / 2, lda2 = 2 * pairs;
  try {
    if (t_rows.size() < (size_t)M * lda2) t_rows.resize((size_t)M * lda2);
  } catch (const std::bad_alloc&) {
    return false;
  }
  if (lda2 == K) pack_bf16(t_rows.data(), A, M, K, lda);
  else
    for (int m = 0; m < M; m++) {
      to_bf16(t_rows.data() + (size_t)m * lda2, A + (size_t)m * lda, K);
      t_rows[(size_t)m * lda2 + K] = 0;
    }
  const uint16_t* a = t_rows.data();
  // 6 rows of A by 4 panels: 24 accumulators in registers, 4 loads and 6 broadcasts a step for 24
  // products; a block's shape changes which elements share it, never an element's sums
  constexpr int RA = 6, NV = 4;
  const size_t pstride = (size_t)pairs * 2 * PANEL;
  int first[kMaxParts + 1] = {0};  // each part's first task: NV panels of its W
  int64_t total_n = 0;
  for (int p = 0; p < count; p++) {
    first[p + 1] = first[p] + (parts[p].N + NV * PANEL - 1) / (NV * PANEL);
    total_n += parts[p].N;
  }
  // Rows of A per pass over W: a pass's rows (768 KB of bf16 at most) stay in the L2 while every
  // panel streams past. Passes are cut even (1,024 rows: 3 of 342, not 438, 438 and 148, which
  // left one of two threads idle for a third of the product). Like blocks, passes change no
  // element's sums.
  const int most_rows = std::max(RA, (int)((384 * 1024 / lda2) / RA * RA));
  const int passes = (M + most_rows - 1) / most_rows;
  const int pass_rows = ((M + passes - 1) / passes + RA - 1) / RA * RA;
  const int wtasks = first[count], tasks = passes * wtasks;
  // static: each thread takes whole passes (its rows of A stay in its L2) unless there is one
#pragma omp parallel for schedule(static) if (pays((int64_t)M * total_n * K / 8) && tasks > 1)
  for (int task = 0; task < tasks; task++) {
    int t = task % wtasks;
    const int pass = task / wtasks, m_end = std::min(M, (pass + 1) * pass_rows);
    const NtPart& q = parts[part_of(first, count, t)];
    const int n0 = t * NV * PANEL, cols = std::min(NV * PANEL, q.N - n0), nv = (cols + PANEL - 1) / PANEL;
    const uint16_t* w = q.W + (size_t)t * NV * pstride;
    for (int m0 = pass * pass_rows; m0 < m_end; m0 += RA) {
      const int ra = std::min(RA, m_end - m0);
      panel_block_for(ra, nv)(a + (size_t)m0 * lda2, lda2, w, pstride, pairs, alpha, beta, q.C + (size_t)m0 * q.ldc + n0, q.ldc, cols);
    }
  }
  return true;
}

}  // namespace

bool gemm_nt_bf16_parts(int M, int K, float alpha, const float* A, int lda, const NtPart* parts, int count, float beta) {
  if (M <= 0 || K <= 0 || count < 1 || count > kMaxParts || !cpu_avx512bf16()) return false;
  for (int p = 0; p < count; p++)
    if (parts[p].N <= 0) return false;
  if (gemm_nt_layout(K) == Bf16Layout::rows) return gemm_nt_amx(M, K, alpha, A, lda, parts, count, beta);
  return gemm_nt_panels(M, K, alpha, A, lda, parts, count, beta);
}

bool gemm_nt_bf16(int M, int N, int K, float alpha, const float* A, int lda, const uint16_t* W, float beta,
                  float* C, int ldc) {
  const NtPart part{W, N, C, ldc};
  return gemm_nt_bf16_parts(M, K, alpha, A, lda, &part, 1, beta);
}

Bf16Layout gemm_nt_layout(int K) { return K % KSTEP == 0 && amx_ready() ? Bf16Layout::rows : Bf16Layout::panels; }

const char* gemm_nt_bf16_kernel() {
  if (!cpu_avx512bf16()) return "none";
  return amx_ready() ? "amx" : "avx512bf16";
}

#else

bool gemm_nt_bf16(int, int, int, float, const float*, int, const uint16_t*, float, float*, int) { return false; }
bool gemm_nt_bf16_parts(int, int, float, const float*, int, const NtPart*, int, float) { return false; }
Bf16Layout gemm_nt_layout(int) { return Bf16Layout::rows; }
const char* gemm_nt_bf16_kernel() { return "none"; }

#endif

}  // namespace maso
