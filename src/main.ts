#!/usr/bin/env bun
import { loadRuntime } from "./runtime/select.ts";
import { WORKER_COMMAND } from "./serve/worker-argv.ts";

// The runtime is checked before the CLI loads: under an unsupported one (plain Node) the CLI's
// imports (node:sqlite, the runtime adapters) would fail with a stack trace instead of this line.
const runtime = await loadRuntime();
if (!runtime.ok) {
  console.error(runtime.error.message);
  process.exit(1);
}
const argv = process.argv.slice(2);
// A worker process loads only what it runs (cli/worker-main.ts); help on it stays with the CLI.
if (argv[0] === WORKER_COMMAND && !argv.includes("--help") && !argv.includes("-h")) {
  const { workerMain } = await import("./cli/worker-main.ts");
  process.exitCode = await workerMain(argv.slice(1));
} else {
  const { main } = await import("./cli/main.ts");
  process.exitCode = await main(argv);
}
