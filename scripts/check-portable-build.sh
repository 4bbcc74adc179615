#!/usr/bin/env bash
# Builds the portable native addon (the baseline level, BLAS and oneDNN detection forced off, as on a
# machine without them) into a scratch directory, and checks that it loads, reports the portable
# GEMM and no oneDNN, and passes the kernel, training-attention and PyTorch-parity tests. The
# installed build is left untouched.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
node "$root/scripts/prebuild.cjs" portable "$work/maso.node"
export MASO_ADDON="$work/maso.node"
cd "$root"
node bin/maso.js doctor | tee "$work/doctor.txt"
grep -q "none found: portable" "$work/doctor.txt"
grep -q "oneDNN not linked" "$work/doctor.txt"
npx vitest run test/engine/kernels.int.test.ts test/engine/attention-order.int.test.ts test/engine/gemm-bf16.int.test.ts \
  test/engine/decoder-parity.int.test.ts
