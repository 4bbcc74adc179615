#!/usr/bin/env bash
# Builds the native addon a second time with BLAS and oneDNN detection forced off (as on a machine
# without them), into a scratch directory, and checks that it loads, reports the portable GEMM and
# no oneDNN, and passes the kernel and PyTorch-parity tests. The installed build is left untouched.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$root/native" "$root/binding.gyp" "$root/scripts" "$root/package.json" "$work/"
ln -s "$root/node_modules" "$work/node_modules"
gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
nodedir="$(npm config get nodedir 2>/dev/null || true)"
(cd "$work" && MASO_BLAS=none MASO_DNNL=none node "$gyp" rebuild ${nodedir:+--nodedir="$nodedir"} >"$work/build.log" 2>&1) || { tail -30 "$work/build.log"; exit 1; }
export MASO_ADDON="$work/build/Release/maso.node"
cd "$root"
node bin/maso.js doctor | tee "$work/doctor.txt"
grep -q "none found: portable" "$work/doctor.txt"
grep -q "oneDNN not linked" "$work/doctor.txt"
npx vitest run test/engine/kernels.int.test.ts test/engine/gemm-bf16.int.test.ts test/engine/decoder-parity.int.test.ts
