// Decides, at native build time, whether the addon links oneDNN for bf16 GEMMs. binding.gyp calls
// this with one of "defines" | "cflags" | "libs". MASO_DNNL=none forces it off; the build must
// never fail for lack of oneDNN, so a missing header or library means "off".
const { existsSync } = require("node:fs");

function detect() {
  if ((process.env.MASO_DNNL || "").toLowerCase() === "none") return null;
  const includes = ["/usr/include", "/usr/local/include", "/opt/homebrew/include"];
  const libs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", "/opt/homebrew/lib"];
  const inc = includes.find((d) => existsSync(`${d}/oneapi/dnnl/dnnl.h`));
  const lib = libs.find((d) => existsSync(`${d}/libdnnl.so`) || existsSync(`${d}/libdnnl.dylib`));
  return inc && lib ? { inc, lib } : null;
}

const dnnl = detect();
const what = process.argv[2];
if (what === "defines") {
  process.stdout.write(`MASO_DNNL=${dnnl ? 1 : 0}`);
} else if (what === "cflags") {
  process.stdout.write(dnnl ? `-I${dnnl.inc}` : "");
} else if (what === "libs") {
  process.stdout.write(dnnl ? `-L${dnnl.lib} -ldnnl` : "");
} else {
  process.stdout.write(dnnl ? "onednn" : "none");
}
