// `maso/distributed`: worker groups in their own processes over NATS (docs/distributed.md).
export { createNatsRuntime, type NatsRuntimeOptions, type NatsSettings } from "../distributed/nats-runtime.js";
export { natsTransport, type NatsTransport } from "../distributed/nats-transport.js";
export { startNatsServer, type NatsServer } from "../distributed/nats-server.js";
export { runWorkerProcess } from "../distributed/worker-process.js";
