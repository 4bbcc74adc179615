// Thread control for our own kernels (OpenMP) and for the linked BLAS, kept in one place so
// `maso doctor` and the first log line of a run can report the truth.
#include "cpu.h"
#include "kernels.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#if MASO_BLAS_ID == 1
#include <cblas.h>
#endif

namespace maso {

// Per calling thread, like OpenMP's own thread-count setting: a lane runs its kernels on 1 thread
// while the main thread keeps its pool.
static thread_local int t_threads = 1;

void set_threads(int n) {
  if (n < 1) n = 1;
  t_threads = n;
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
#if MASO_BLAS_ID == 1
  // the BLAS never starts threads of its own: a second pool would fight ours for the cores
  // (OpenBLAS's idle threads spin in sched_yield); gemm() shares large GEMMs out over OpenMP
  openblas_set_num_threads(1);
#endif
}

int get_threads() { return t_threads; }

}  // namespace maso

#if defined(MASO_WRAP_GOMP) && defined(_OPENMP)
// libgomp enters every parallel region it is handed, also one that runs on one thread (an `if`
// clause that is false, or a generation lane's single thread), and each costs a futex syscall: about
// 1.5 µs, more on a paravirtualised VM, and the lanes' small decode ops hand it tens of thousands a
// second. The link wraps GOMP_parallel (binding.gyp: -Wl,--wrap) so that such a region, outside any
// other, runs its body on the calling thread directly. With no team, its worksharing loops are
// orphaned, and an orphaned loop runs every iteration on the calling thread, in order, as the
// one-thread team did: the same work in the same order, so the same bits.
extern "C" void __real_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
extern "C" void __wrap_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  const bool one = num_threads == 1 || (num_threads == 0 && omp_get_max_threads() == 1);
  if (one && omp_get_level() == 0) {
    fn(data);
    return;
  }
  __real_GOMP_parallel(fn, data, num_threads, flags);
}
#endif

namespace maso {

bool has_openmp() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

const char* blas_config() {
#if MASO_BLAS_ID == 1
  return openblas_get_config();
#elif MASO_BLAS_ID == 2
  return "Apple Accelerate";
#else
  return "portable blocked GEMM (no BLAS linked)";
#endif
}

// binding.gyp defines MASO_LEVEL; a build made some other way says so.
const char* build_level() {
#ifdef MASO_LEVEL
  return MASO_LEVEL;
#else
  return "unknown";
#endif
}

}  // namespace maso
