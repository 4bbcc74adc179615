// The sampler's per-token arithmetic over a batch of logit rows: the full-vocabulary log-sum-exp at
// each row's temperature (the trainer's normaliser), the greedy argmax, and the inverse-CDF draw
// when every allowed id may be drawn (no top-k/top-p cut; src/engine/generate/sampling.ts handles
// cuts). The uniform numbers come from the caller (one per token, from each request's seeded
// generator), so a request draws the same tokens alone or in any batch. One thread per row, in a
// fixed order: results do not depend on the thread count.
#include <cmath>
#include <cstdint>
#include <vector>

#include "vec.h"

namespace maso {

// Row r: inv[r] = 1/temperature (0 = greedy: argmax, normaliser at temperature 1). u[r] in [0,1) is
// the draw of a sampled row; NaN asks only for lse (a row the caller cuts itself). Outputs: lse[r];
// token[r] (-1 when not drawn here); sampled_lp[r] = log-prob under the drawn-from distribution.
void sample_rows(const float* z, int R, int V, int allowed, const float* inv, const double* u,
                 double* lse, int32_t* token, double* sampled_lp) {
  const int n = allowed < V ? allowed : V;
#pragma omp parallel if (pays((int64_t)R * V))
  {
    std::vector<float> w(V);
#pragma omp for schedule(static)
    for (int r = 0; r < R; r++) {
      const float* zr = z + (size_t)r * V;
      const bool greedy = inv[r] == 0.0f;
      const float t = greedy ? 1.0f : inv[r];
      const float mx = max_of(zr, V);
      const double sum = exp_scaled(w.data(), zr, mx, t, V);
      lse[r] = (double)mx * t + std::log(sum);
      token[r] = -1;
      sampled_lp[r] = 0.0;
      if (greedy) {
        int best = 0;
        for (int j = 1; j < n; j++)
          if (zr[j] > zr[best]) best = j;  // ties keep the lower id
        token[r] = best;
        continue;
      }
      if (std::isnan(u[r])) continue;
      // weights relative to the largest allowed logit: w[j] above holds them when nothing is masked
      const float mxk = n == V ? mx : max_of(zr, n);
      const double mass = n == V ? sum : exp_scaled(w.data(), zr, mxk, t, n);
      const double target = u[r] * mass;
      double acc = 0.0;
      int pick = n - 1;
      for (int j = 0; j < n; j++) {
        acc += w[j];
        if (target < acc) {
          pick = j;
          break;
        }
      }
      token[r] = pick;
      sampled_lp[r] = std::log((double)w[pick] / mass);
    }
  }
}

}  // namespace maso
