// Transparent huge pages for the engine's large buffers. Where the system leaves huge pages to the
// program (THP "madvise", the default of many distributions), a multi-gigabyte weight, gradient or
// optimiser buffer is otherwise faulted in 4 KiB at a time: on a VM each fault is a trap to the
// hypervisor, and the first step of a 0.5B model spent most of its 30 s there. Advice changes which
// pages back the memory, never its contents, so no result changes.
#include <cstdint>

#include "kernels.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace maso {

size_t advise_huge_pages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t HUGE = (uintptr_t)2 << 20;
  if (bytes < 2 * HUGE) return 0;  // a huge page inside a smaller buffer would mostly back its neighbours
  const uintptr_t lo = ((uintptr_t)p + HUGE - 1) & ~(HUGE - 1);
  const uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE - 1);
  if (hi <= lo) return 0;
  // only advice: a kernel without THP refuses it (EINVAL) and the buffer keeps small pages
  return madvise((void*)lo, hi - lo, MADV_HUGEPAGE) == 0 ? hi - lo : 0;
#else
  (void)p;
  (void)bytes;
  return 0;
#endif
}

}  // namespace maso
