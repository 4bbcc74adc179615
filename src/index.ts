// maso's public API. Every export is listed here explicitly; the CLI is a separate entry point.
export { MasoError } from "./errors.js";
export { describeNative, defaultThreads } from "./native/binding.js";
