// The instruction-set level a build was compiled for, and what the CPU it runs on offers.
// binding.gyp compiles the whole addon for one level (baseline x86-64, AVX2, AVX-512); the few
// kernels that need AVX512-BF16 are compiled for it in every build and chosen at run time.
#pragma once

// x86-64 compilers that can compile one function for more instructions than the rest of the build.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MASO_BF16_KERNELS 1
#define MASO_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#else
#define MASO_BF16_KERNELS 0
#endif

namespace maso {

// The level this build was compiled for ("baseline", "avx2", "avx512", "generic" off x86-64).
const char* build_level();
// The CPU and the OS (which must save the zmm registers) support AVX512-BF16 / AMX-BF16.
bool cpu_avx512bf16();
bool cpu_amxbf16();

}  // namespace maso
