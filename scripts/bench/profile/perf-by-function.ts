/**
 * Reads `perf script -F time,ip,sym,dso` (call graphs) with a JavaScriptCore JIT dump and
 * prints where the samples went: the kernel, the runtime's own code, libraries, JavaScript; which
 * JavaScript callbacks the work ran under; and each JavaScript function's share, counting what it
 * calls in the runtime and libraries as its own and the kernel's work apart.
 *   bun scripts/bench/profile/perf-by-function.ts JITDUMP [PERF_SCRIPT_TEXT]   (else stdin)
 * ping-profile.sh runs it; see docs/benchmarks.md ("Where a ping's CPU goes").
 */
import { readFileSync } from "node:fs";
import { functionName, JitNames, readJitDump } from "./jit-dump.ts";

export interface Frame {
  address: bigint;
  symbol: string;
  dso: string;
}

export interface Sample {
  /** When perf took it (ns, CLOCK_MONOTONIC), where the text has sample times (`-F time,...`). */
  time?: bigint;
  /** Innermost frame first. */
  frames: Frame[];
}

/**
 * One sample per blank-line-separated block. A block's header line (not indented: comm, pid, the
 * time "12345.678901:") gives the sample's time; the indented lines are its frames.
 */
export function parsePerfScript(text: string): Sample[] {
  const samples: Sample[] = [];
  let current: Frame[] = [];
  let time: bigint | undefined;
  const end = () => {
    if (current.length > 0) samples.push(time === undefined ? { frames: current } : { time, frames: current });
    current = [];
    time = undefined;
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") {
      end();
      continue;
    }
    const match = /^([0-9a-f]+)\s+(.*?)\s*\(([^)]*)\)$/.exec(line);
    if (match && raw.startsWith("\t")) {
      current.push({ address: BigInt(`0x${match[1]}`), symbol: match[2]!, dso: match[3]! });
      continue;
    }
    const stamp = /(\d+)\.(\d{1,9}):/.exec(line);
    if (stamp) time = BigInt(stamp[1]!) * 1_000_000_000n + BigInt(stamp[2]!.padEnd(9, "0"));
  }
  end();
  return samples;
}

export type Place = "JavaScript" | "kernel" | "runtime" | string;

export interface Report {
  samples: number;
  /** Where each sample's innermost frame was: JavaScript, the kernel, the runtime's executable, or a library by name. */
  leaves: Map<Place, number>;
  /** Samples with no JavaScript on the stack, by the system call they were in ("runtime" when none). */
  outsideJs: Map<string, number>;
  /** The outermost JavaScript function of each sample that has one: the callback the runtime called. */
  roots: Map<string, number>;
  /** The innermost JavaScript function, for samples in user space (JavaScript, runtime, libraries). */
  userUnder: Map<string, number>;
  /** The innermost JavaScript function, for samples in the kernel (its system calls). */
  kernelUnder: Map<string, number>;
}

const isKernel = (f: Frame) => f.dso.includes("kernel");
const libraryName = (dso: string) => dso.slice(dso.lastIndexOf("/") + 1);
const isLibrary = (f: Frame) => /\.so(\.\d+)*$/.test(f.dso);

/** Thunks, inline caches and trampolines are JIT code but not a function of ours: look past them. */
const isGlue = (name: string) => /^JSC-(Thunk|ExtraCTIThunk|InlineCache|DFGThunk|LLIntThunk)/.test(name);

const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

export function analyse(samples: Sample[], names: JitNames): Report {
  const report: Report = { samples: samples.length, leaves: new Map(), outsideJs: new Map(), roots: new Map(), userUnder: new Map(), kernelUnder: new Map() };
  for (const { time, frames } of samples) {
    const jit = frames.map((f) => names.nameOf(f.address, time));
    const leaf = frames[0]!;
    bump(report.leaves, jit[0] !== undefined ? "JavaScript" : isKernel(leaf) ? "kernel" : isLibrary(leaf) ? libraryName(leaf.dso) : "runtime");
    const functions = jit.filter((n): n is string => n !== undefined && !isGlue(n));
    if (functions.length === 0) {
      const syscall = frames.map((f) => /^(?:__x64_sys_|__do_sys_|__se_sys_)(\w+)/.exec(f.symbol)?.[1]).find((s) => s !== undefined);
      bump(report.outsideJs, syscall !== undefined ? `system call ${syscall}` : isKernel(leaf) ? "kernel (no system call)" : isLibrary(leaf) ? libraryName(leaf.dso) : "runtime");
      continue;
    }
    bump(report.roots, functionName(functions[functions.length - 1]!));
    bump(isKernel(leaf) ? report.kernelUnder : report.userUnder, functionName(functions[0]!));
  }
  return report;
}

export function formatReport(report: Report, top = 25): string {
  const percent = (n: number) => `${((n * 100) / Math.max(report.samples, 1)).toFixed(1).padStart(5)} %`;
  const section = (title: string, map: Map<string, number>, limit = top) => {
    const rows = [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
    const total = [...map.values()].reduce((a, b) => a + b, 0);
    return [`${title} (${percent(total).trim()} of the samples)`, ...rows.map(([k, v]) => `  ${percent(v)}  ${k}`)].join("\n");
  };
  return [
    `${report.samples} samples`,
    section("innermost frame in", report.leaves),
    section("no JavaScript on the stack", report.outsideJs),
    section("under each JavaScript callback (the outermost function)", report.roots),
    section("user space, by the innermost JavaScript function (its calls into the runtime and libraries included)", report.userUnder),
    section("kernel, by the JavaScript function that made the system call", report.kernelUnder, 12),
  ].join("\n\n");
}

if (import.meta.main) {
  const [dump, script] = process.argv.slice(2);
  if (!dump) {
    console.error("usage: bun scripts/bench/profile/perf-by-function.ts JITDUMP [PERF_SCRIPT_TEXT]   (perf script -F time,ip,sym,dso; else stdin)");
    process.exit(2);
  }
  const names = new JitNames(readJitDump(readFileSync(dump)));
  const text = script ? readFileSync(script, "utf8") : await new Response(Bun.stdin.stream()).text();
  console.log(formatReport(analyse(parsePerfScript(text), names)));
}
