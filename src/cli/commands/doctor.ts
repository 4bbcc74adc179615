// `maso doctor`: prints the native build report (see ../doctor.ts). Exit 1 when the addon is missing.
import { parseFlags } from "../args.js";
import { doctorReport, formatDoctor } from "../doctor.js";
import { type Command, println } from "./types.js";

export const doctorCommand: Command = {
  name: "doctor",
  summary: "report the native build: BLAS in use, threads, OpenMP",
  help: `usage: maso doctor [--json]

Reports what the native engine was built with, so a slow run can be explained before it starts.

options:
  --json   print the report as JSON`,
  async run(argv, io) {
    const p = parseFlags("doctor", argv, { json: { type: "boolean" } });
    const report = doctorReport();
    println(io, p.values.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
    return report.nativeBuild === "ok" ? 0 : 1;
  },
};
