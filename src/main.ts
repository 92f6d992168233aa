#!/usr/bin/env bun
import { loadRuntime } from "./runtime/select.ts";

// The runtime is checked before the CLI loads: under an unsupported one (plain Node) the CLI's
// imports (node:sqlite, the runtime adapters) would fail with a stack trace instead of this line.
const runtime = await loadRuntime();
if (!runtime.ok) {
  console.error(runtime.error.message);
  process.exit(1);
}
const { main } = await import("./cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
