// AdamW with decoupled weight decay (Loshchilov & Hutter), the update torch.optim.AdamW performs.
#include <cmath>

#include "kernels.h"
#include "vec.h"

namespace maso {

void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n, float lr,
                  float beta1, float beta2, float eps, float weightDecay, float bc1, float bc2) {
  weights_changed();  // bf16 copies of these weights are outdated
  const float stepSize = lr / bc1;
  const float bc2Sqrt = std::sqrt(bc2);
#pragma omp parallel for simd schedule(static) if (parallel : pays(n))
  for (int64_t i = 0; i < n; i++) {
    float g = grad[i];
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float p = param[i] * (1.0f - lr * weightDecay);
    param[i] = p - stepSize * mi / (std::sqrt(vi) / bc2Sqrt + eps);
  }
}

}  // namespace maso
