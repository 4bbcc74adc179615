// Prints the CPU's features (cpu_features.h), one a line, for scripts/cpu-level.cjs at build time,
// before any addon exists. Exits 2 where the compiler has no cpuid: the caller then falls back.
#include <cstdio>

#include "cpu_features.h"

int main() {
#if MASO_CPU_PROBE
  maso_cpu::for_each_feature([](const char* name) { std::printf("%s\n", name); });
  return 0;
#else
  return 2;
#endif
}
