// N-API bindings for the KV-cache sampler's kernels (native/decode.cc). Same rules as addon.cc:
// check every argument and buffer length, throw JavaScript errors, never abort.
#include <napi.h>

void RegisterDecodeBindings(Napi::Env env, Napi::Object exports) {
  (void)env;
  (void)exports;
}
