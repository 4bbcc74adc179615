// maso_cpu.node: the CPU's features (cpu_features.h) for the loader and the install step, which
// choose among builds where no compiler may exist. A separate addon compiled at the baseline level,
// so loading it can never fault, whatever the CPU.
#include <node_api.h>

#include "cpu_features.h"

// features(): the feature names, or null where this build has no cpuid (another compiler or CPU).
static napi_value Features(napi_env env, napi_callback_info) {
  napi_value out;
#if MASO_CPU_PROBE
  napi_create_array(env, &out);
  uint32_t i = 0;
  maso_cpu::for_each_feature([&](const char* name) {
    napi_value s;
    napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &s);
    napi_set_element(env, out, i++, s);
  });
#else
  napi_get_null(env, &out);
#endif
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "features", NAPI_AUTO_LENGTH, Features, nullptr, &fn);
  napi_set_named_property(env, exports, "features", fn);
  return exports;
}
