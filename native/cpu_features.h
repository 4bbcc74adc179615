// The CPU features the addon's instruction-set levels need (scripts/cpu-level.cjs), read with
// cpuid, and xgetbv for the OS's part: AVX and AVX-512 instructions fault unless the OS saves the
// ymm / zmm registers, which XCR0 says. /proc/cpuinfo is no substitute: a hypervisor may leave a
// flag out (abm, for LZCNT) on a CPU that runs the instruction. Header-only, for the build-time
// probe (cpu_probe.cc) and the load-time one (addon_cpu.cc); both are compiled at the baseline
// level, so they run on every x86-64 CPU.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MASO_CPU_PROBE 1
#include <cpuid.h>

#include <cstdint>

namespace maso_cpu {

// The register state the OS must save for a feature's instructions to run.
enum State { kGpr, kYmm, kZmm };

struct Feature {
  const char* name;  // the names of the psABI level lists and the Intel SDM, lower case
  unsigned leaf;     // cpuid leaf (sub-leaf 0)
  int reg;           // 1 = ebx, 2 = ecx
  int bit;
  State state;
};

// x86-64-v2, v3 and v4 (the psABI lists), the levels' -march=x86-64-vN sets.
inline constexpr Feature kFeatures[] = {
    {"sse3", 1, 2, 0, kGpr},          {"ssse3", 1, 2, 9, kGpr},       {"fma", 1, 2, 12, kYmm},
    {"cmpxchg16b", 1, 2, 13, kGpr},   {"sse4.1", 1, 2, 19, kGpr},     {"sse4.2", 1, 2, 20, kGpr},
    {"movbe", 1, 2, 22, kGpr},        {"popcnt", 1, 2, 23, kGpr},     {"xsave", 1, 2, 26, kGpr},
    {"avx", 1, 2, 28, kYmm},          {"f16c", 1, 2, 29, kYmm},       {"bmi1", 7, 1, 3, kGpr},
    {"avx2", 7, 1, 5, kYmm},          {"bmi2", 7, 1, 8, kGpr},        {"avx512f", 7, 1, 16, kZmm},
    {"avx512dq", 7, 1, 17, kZmm},     {"avx512cd", 7, 1, 28, kZmm},   {"avx512bw", 7, 1, 30, kZmm},
    {"avx512vl", 7, 1, 31, kZmm},     {"lahf-sahf", 0x80000001, 2, 0, kGpr},
    {"lzcnt", 0x80000001, 2, 5, kGpr},
};

// XCR0, or 0 where the OS has not enabled xgetbv (CPUID.1:ECX.OSXSAVE[27]); xgetbv faults then.
inline uint64_t xcr0() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

// Calls f(name) for each feature of kFeatures that the CPU has and the OS lets run. An OS that
// enables zmm state lazily (macOS) reads as without AVX-512: a lower level, never a fault.
template <class F>
void for_each_feature(F f) {
  const uint64_t x = xcr0();
  const bool ymm = (x & 0x6) == 0x6;           // SSE and AVX state
  const bool zmm = ymm && (x & 0xe0) == 0xe0;  // opmask, ZMM_Hi256 and Hi16_ZMM state
  for (const Feature& ft : kFeatures) {
    unsigned r[4];
    // false when the leaf is above the CPU's highest (basic or extended) leaf
    if (!__get_cpuid_count(ft.leaf, 0, &r[0], &r[1], &r[2], &r[3])) continue;
    if (!(r[ft.reg] & (1u << ft.bit))) continue;
    if ((ft.state == kYmm && !ymm) || (ft.state == kZmm && !zmm)) continue;
    f(ft.name);
  }
}

}  // namespace maso_cpu

#else
#define MASO_CPU_PROBE 0
#endif
