// Decides, at native build time, which CBLAS the addon links. binding.gyp calls this with one of
// "defines" | "cflags" | "libs" | "ldflags". MASO_BLAS=none forces the portable kernel; the build
// must never fail for lack of a BLAS, so every probe falls back to "none".
const { execSync } = require("node:child_process");
const { existsSync } = require("node:fs");

function pkgConfig(args) {
  try {
    return execSync(`pkg-config ${args} openblas`, { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function detect() {
  const forced = (process.env.MASO_BLAS || "").toLowerCase();
  if (forced === "none") return { name: "none", cflags: "", libs: "" };
  if (process.platform === "darwin" && forced !== "openblas") {
    return { name: "accelerate", cflags: "-DACCELERATE_NEW_LAPACK", libs: "-framework Accelerate" };
  }
  const cflags = pkgConfig("--cflags");
  const libs = pkgConfig("--libs");
  if (cflags !== null && libs !== null) return { name: "openblas", cflags, libs };
  const dirs = ["/usr/include/x86_64-linux-gnu/openblas-pthread", "/usr/include/openblas", "/usr/include"];
  for (const dir of dirs) {
    if (existsSync(`${dir}/cblas.h`) && existsSync(`${dir}/openblas_config.h`)) {
      return { name: "openblas", cflags: `-I${dir}`, libs: "-lopenblas" };
    }
  }
  return { name: "none", cflags: "", libs: "" };
}

const blas = detect();
const what = process.argv[2];
if (what === "defines") {
  const id = { none: 0, openblas: 1, accelerate: 2 }[blas.name];
  process.stdout.write(`MASO_BLAS_ID=${id}`);
} else if (what === "cflags") {
  process.stdout.write(blas.cflags);
} else if (what === "libs") {
  process.stdout.write(blas.libs);
} else {
  process.stdout.write(blas.name);
}
