import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // native kernels use every core; running test files in parallel would only oversubscribe
    fileParallelism: false,
  },
});
