// Waits for Ctrl-C: resolves on the first SIGINT or SIGTERM, for the commands that serve until
// stopped (dashboard, serve). It never exits the process.

/** Resolves once SIGINT or SIGTERM arrives, removing its handlers. */
export function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
