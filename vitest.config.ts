import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // examples and recipes import the library as "maso" and its subpaths, as users do (tsconfig.json
  // maps them the same way)
  resolve: {
    alias: [
      { find: /^maso$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
      { find: /^maso\/([a-z]+)$/, replacement: fileURLToPath(new URL("./src/entry/$1.ts", import.meta.url)) },
    ],
  },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/typed-array-equality.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // native kernels use every core; running test files in parallel would only oversubscribe
    fileParallelism: false,
    // one generation lane: a lane thread's start (tsx compiling the engine) would cost most tests
    // more than their generation; test/runtime/lanes.test.ts and the contract suite run lanes
    env: { MASO_LANES: "1" },
  },
});
