// Elementwise, normalisation and rotary kernels with their backward passes. All loops over tokens
// are split across OpenMP threads when the work pays for it (vec.h); inner loops over C/HS/F are
// unit-stride for vectorisation. No result depends on the thread count: reductions run over
// fixed blocks merged in order.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels.h"
#include "vec.h"

namespace maso {

void embedding_forward(float* out, const int32_t* ids, const float* wte, int N, int C) {
#pragma omp parallel for schedule(static) if (pays((int64_t)N * C))
  for (int n = 0; n < N; n++) {
    const float* row = wte + (size_t)ids[n] * C;
    float* o = out + (size_t)n * C;
    for (int c = 0; c < C; c++) o[c] = row[c];
  }
}

void embedding_backward(float* dwte, const float* dout, const int32_t* ids, int N, int C) {
  // serial over tokens: the same id may repeat, and N*C is small next to any GEMM
  for (int n = 0; n < N; n++) {
    float* d = dwte + (size_t)ids[n] * C;
    const float* g = dout + (size_t)n * C;
#pragma omp simd
    for (int c = 0; c < C; c++) d[c] += g[c];
  }
}

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                     float eps) {
#pragma omp parallel for schedule(static) if (pays((int64_t)N * C))
  for (int n = 0; n < N; n++) {
    const float* x = inp + (size_t)n * C;
    float* o = out + (size_t)n * C;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int c = 0; c < C; c++) ss += x[c] * x[c];
    float r = 1.0f / std::sqrt(ss / C + eps);
    rstd[n] = r;
#pragma omp simd
    for (int c = 0; c < C; c++) o[c] = x[c] * r * weight[c];
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int N, int C) {
  const bool par = pays((int64_t)N * C);
  if (dinp) {
#pragma omp parallel for schedule(static) if (par)
    for (int n = 0; n < N; n++) {
      const float* x = inp + (size_t)n * C;
      const float* g = dout + (size_t)n * C;
      float r = rstd[n];
      float dot = 0.0f;  // sum_c (g*w) * xhat
#pragma omp simd reduction(+ : dot)
      for (int c = 0; c < C; c++) dot += g[c] * weight[c] * x[c] * r;
      float mean = dot / C;
      float* d = dinp + (size_t)n * C;
#pragma omp simd
      for (int c = 0; c < C; c++) d[c] += r * (g[c] * weight[c] - x[c] * r * mean);
    }
  }
  if (!dweight) return;
  // the reduction over tokens runs per block of channels, tokens in order: no thread-count dependence
  const int CB = 64, blocks = (C + CB - 1) / CB;
#pragma omp parallel for schedule(static) if (par)
  for (int cb = 0; cb < blocks; cb++) {
    const int c0 = cb * CB, c1 = std::min(C, c0 + CB);
    float acc[CB] = {0.0f};
    for (int n = 0; n < N; n++) {
      const float* x = inp + (size_t)n * C;
      const float* g = dout + (size_t)n * C;
      const float r = rstd[n];
#pragma omp simd
      for (int c = c0; c < c1; c++) acc[c - c0] += g[c] * x[c] * r;
    }
    for (int c = c0; c < c1; c++) dweight[c] += acc[c - c0];
  }
}

// cos/sin of pos * theta^(-2i/HS), computed like HF: inverse frequencies in fp32, angle in fp32.
static void rope_angles(float* cs, float* sn, const float* invFreq, int pos, int half) {
  for (int i = 0; i < half; i++) {
    const float ang = (float)pos * invFreq[i];
    cs[i] = std::cos(ang);
    sn[i] = std::sin(ang);
  }
}

// The calling thread's cos/sin rows for positions [0, rows), kept between calls: a decode step
// applies RoPE twice a layer to the same few positions, and libm's cos and sin for every row were
// most of each call. The entries are the values rope_angles gives, so the bits do not change.
// Positions from kRopeRows on (longer contexts) are computed per call instead.
constexpr int kRopeRows = 1 << 15;
struct RopeTable {
  float theta = 0.0f;
  int HS = 0, rows = 0;
  std::vector<float> invFreq, cs, sn;
};

static const RopeTable& rope_table(float theta, int HS, const int32_t* pos, int N) {
  static thread_local RopeTable t;
  const int half = HS / 2;
  if (t.theta != theta || t.HS != HS) {
    t = RopeTable{theta, HS, 0, std::vector<float>(half), {}, {}};
    for (int i = 0; i < half; i++) t.invFreq[i] = 1.0f / std::pow(theta, (float)(2 * i) / (float)HS);
  }
  int top = 0;
  for (int n = 0; n < N; n++) top = std::max(top, std::min(pos[n], kRopeRows - 1) + 1);
  if (top > t.rows) {
    const int rows = std::min(kRopeRows, std::max(top, 2 * t.rows));
    t.cs.resize((size_t)rows * half);
    t.sn.resize((size_t)rows * half);
    for (int r = t.rows; r < rows; r++)
      rope_angles(t.cs.data() + (size_t)r * half, t.sn.data() + (size_t)r * half, t.invFreq.data(), r, half);
    t.rows = rows;
  }
  return t;
}

static void rope_apply(float* out, const float* inp, const int32_t* pos, int N, int H, int HS,
                       float theta, float sign) {
  const int half = HS / 2;
  const RopeTable& t = rope_table(theta, HS, pos, N);
#pragma omp parallel if (pays((int64_t)N * H * HS))
  {
    std::vector<float> far_cs, far_sn;  // a position past the table's rows
#pragma omp for schedule(static)
    for (int n = 0; n < N; n++) {
      const float *cs, *sn;
      if (pos[n] < t.rows) {
        cs = t.cs.data() + (size_t)pos[n] * half;
        sn = t.sn.data() + (size_t)pos[n] * half;
      } else {
        far_cs.resize(half);
        far_sn.resize(half);
        rope_angles(far_cs.data(), far_sn.data(), t.invFreq.data(), pos[n], half);
        cs = far_cs.data();
        sn = far_sn.data();
      }
      for (int h = 0; h < H; h++) {
        const float* x = inp + ((size_t)n * H + h) * HS;
        float* o = out + ((size_t)n * H + h) * HS;
        for (int i = 0; i < half; i++) {
          const float x1 = x[i], x2 = x[i + half], s = sign * sn[i];
          o[i] = x1 * cs[i] - x2 * s;
          o[i + half] = x2 * cs[i] + x1 * s;
        }
      }
    }
  }
}

void rope_forward(float* out, const float* inp, const int32_t* pos, int N, int H, int HS,
                  float theta) {
  rope_apply(out, inp, pos, N, H, HS, theta, 1.0f);
}

// The rotation is orthogonal, so its backward is the rotation by -angle.
void rope_backward(float* dinp, const float* dout, const int32_t* pos, int N, int H, int HS,
                   float theta) {
  rope_apply(dinp, dout, pos, N, H, HS, theta, -1.0f);
}

void swiglu_forward(float* out, const float* gate, const float* up, int N, int F) {
  int64_t total = (int64_t)N * F;
#pragma omp parallel for simd schedule(static) if (parallel : pays(total))
  for (int64_t i = 0; i < total; i++) {
    float g = gate[i];
    out[i] = g * sigmoid(g) * up[i];
  }
}

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int N, int F) {
  int64_t total = (int64_t)N * F;
#pragma omp parallel for simd schedule(static) if (parallel : pays(total))
  for (int64_t i = 0; i < total; i++) {
    float g = gate[i];
    float s = sigmoid(g);
    float silu = g * s;
    dup[i] = dout[i] * silu;
    dgate[i] = dout[i] * up[i] * s * (1.0f + g * (1.0f - s));
  }
}

void tanh_forward(float* out, const float* inp, int64_t n) {
#pragma omp parallel for simd schedule(static) if (parallel : pays(n))
  for (int64_t i = 0; i < n; i++) out[i] = std::tanh(inp[i]);
}

void tanh_backward(float* dinp, const float* dout, const float* out, int64_t n) {
#pragma omp parallel for simd schedule(static) if (parallel : pays(n))
  for (int64_t i = 0; i < n; i++) dinp[i] += dout[i] * (1.0f - out[i] * out[i]);
}

void axpy(float* y, const float* x, float alpha, int64_t n) {
#pragma omp parallel for simd schedule(static) if (parallel : pays(n))
  for (int64_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

// Blocks of SUMSQ_BLOCK floats, then the block sums in order. Within a block, element i goes to
// running sum i mod SUMSQ_LANES, in order, and the sums fold pairwise at the end: independent sums
// vectorise, where a single running sum is a chain of dependent adds (the kernel ran at a quarter of
// memory speed). The order depends on n alone, never on the thread count.
static const int64_t SUMSQ_BLOCK = 1 << 14;
static const int SUMSQ_LANES = 16;

double sumsq(const float* x, int64_t n) {
  const int64_t blocks = (n + SUMSQ_BLOCK - 1) / SUMSQ_BLOCK;
  std::vector<double> part(blocks, 0.0);
#pragma omp parallel for schedule(static) if (pays(n))
  for (int64_t b = 0; b < blocks; b++) {
    double acc[SUMSQ_LANES] = {};
    int64_t i = b * SUMSQ_BLOCK;
    const int64_t end = std::min(n, i + SUMSQ_BLOCK);
    for (; i + SUMSQ_LANES <= end; i += SUMSQ_LANES) {
      for (int j = 0; j < SUMSQ_LANES; j++) acc[j] += (double)x[i + j] * x[i + j];
    }
    for (int j = 0; i + j < end; j++) acc[j] += (double)x[i + j] * x[i + j];
    for (int w = SUMSQ_LANES / 2; w >= 1; w /= 2) {
      for (int j = 0; j < w; j++) acc[j] += acc[j + w];
    }
    part[b] = acc[0];
  }
  double s = 0.0;
  for (double p : part) s += p;
  return s;
}

void scale(float* x, float s, int64_t n) {
#pragma omp parallel for simd schedule(static) if (parallel : pays(n))
  for (int64_t i = 0; i < n; i++) x[i] *= s;
}

void zero(float* x, int64_t n) {
#pragma omp parallel for simd schedule(static) if (parallel : pays(n))
  for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
}

void gather_rows(float* dst, const float* src, const int32_t* rows, int M, int C) {
#pragma omp parallel for schedule(static) if (pays((int64_t)M * C))
  for (int r = 0; r < M; r++) {
    const float* s = src + (size_t)rows[r] * C;
    float* d = dst + (size_t)r * C;
    for (int c = 0; c < C; c++) d[c] = s[c];
  }
}

void scatter_add_rows(float* dst, const float* src, const int32_t* rows, int M, int C) {
  for (int r = 0; r < M; r++) {
    float* d = dst + (size_t)rows[r] * C;
    const float* s = src + (size_t)r * C;
#pragma omp simd
    for (int c = 0; c < C; c++) d[c] += s[c];
  }
}

}  // namespace maso
