#!/usr/bin/env bash
# Runs the engine's numerical tests at every kernel level this CPU runs besides the installed one
# (`npm test` ran them there): each level is built into a scratch directory (scripts/prebuild.cjs
# <level>; under CI copied from MASO_PREBUILD_CACHE, where `npm pack` left the same build),
# `maso doctor` must report it, and the tests run against it through MASO_ADDON. The
# levels compile different kernels (AVX-512, AVX2, SSE: GEMM tiles, decode attention, exp), so a
# result that holds at the best level only is caught here. The installed build is left untouched.
#
# The tests: kernels against the naive ones, training attention's own summation order, fp32 and
# bf16 GEMMs, row-invariant products (fp32 and bf16), the decoder's PyTorch parity (fp32, bf16),
# the sampler against the training forward,
# batching (bit-identical alone and batched), bf16 batch invariance, decode kernels, stops and
# prefix cache, and 1 and 2 threads giving the same bits. Left out: lane, file-format and CLI
# tests, which do not depend on the level's kernels.
#
# Measured on the 2-core AMD EPYC CI runs on: per level about 15 s to build and 14 s to test, so
# about a minute for avx2 and baseline together.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
installed="$(cat build/Release/maso.level)"
levels="$(node -p 'require("./scripts/cpu-level.cjs").supported().join(" ")')"
tests=(
  test/engine/kernels.int.test.ts
  test/engine/attention-order.int.test.ts
  test/engine/gemm-bf16.int.test.ts
  test/engine/gemm-nt-bf16.int.test.ts
  test/engine/row-invariance-fp32.int.test.ts
  test/engine/decoder-parity.int.test.ts
  test/engine/decoder-bf16.int.test.ts
  test/generate/generate-parity.int.test.ts
  test/generate/generate-bf16.int.test.ts
  test/generate/batching.int.test.ts
  test/generate/bf16-invariance.int.test.ts
  test/generate/decode-kernels.int.test.ts
  test/generate/stops-and-requests.int.test.ts
  test/generate/prefix-cache.int.test.ts
  test/engine/threads.int.test.ts
)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "maso: installed level $installed; this CPU runs $levels"
for level in $levels; do
  [ "$level" = "$installed" ] && continue
  t0=$SECONDS
  mkdir -p "$work/$level"
  node scripts/prebuild.cjs "$level" "$work/$level/maso.node"
  t1=$SECONDS
  export MASO_ADDON="$work/$level/maso.node"
  node bin/maso.js doctor | tee "$work/$level/doctor.txt"
  grep -Eq "^kernels +$level \(" "$work/$level/doctor.txt" || {
    echo "maso: doctor does not report the $level build" >&2
    exit 1
  }
  npx vitest run "${tests[@]}"
  unset MASO_ADDON
  echo "maso: level $level: built in $((t1 - t0)) s, tested in $((SECONDS - t1)) s"
done
