/**
 * The long fuzz run (issue 8): the properties of test/fuzz/targets with many inputs, then the
 * time-per-byte table of each parser's worst-case shapes at n, 2n, 4n, 8n bytes (flat = linear).
 *
 *   bun scripts/fuzz/run.ts [--runs N] [--seed S] [--only NAME[,NAME]] [--no-scaling]
 *
 * --runs: inputs per parser (default 1,000,000), shared among its properties by weight.
 * --seed: replays a run (each batch of a property uses seed + batch index; a failure prints its own).
 * Exits 1 when a property fails.
 */
import fc from "fast-check";
import { allTargets } from "../../test/fuzz/targets/index.ts";
import type { FuzzProperty, FuzzTarget, ScalingShape } from "../../test/fuzz/targets/target.ts";

interface Options {
  runs: number;
  seed: number;
  only?: string[];
  scaling: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { runs: 1_000_000, seed: Date.now() ^ (Math.random() * 0x100000000), scaling: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v!;
    };
    if (a === "--runs") o.runs = positiveInt(value(), a);
    else if (a === "--seed") o.seed = Number.parseInt(value(), 10) | 0;
    else if (a === "--only") o.only = value().split(",");
    else if (a === "--no-scaling") o.scaling = false;
    else usage(`unknown argument ${a}`);
  }
  return o;
}

function positiveInt(text: string, flag: string): number {
  const n = Number(text.replace(/_/g, ""));
  if (!Number.isInteger(n) || n < 1) usage(`${flag} needs a positive integer, got ${text}`);
  return n;
}

function usage(problem: string): never {
  console.error(`${problem}\nusage: bun scripts/fuzz/run.ts [--runs N] [--seed S] [--only ${allTargets.map((t) => t.name).join(",")}] [--no-scaling]`);
  process.exit(2);
}

const BATCH = 20_000;

/** Runs one property in batches (bounded memory, visible progress); returns the failure reports. */
async function runProperty(p: FuzzProperty, runs: number, seed: number, label: string): Promise<string[]> {
  const failures: string[] = [];
  for (let done = 0, batch = 0; done < runs; batch++) {
    const numRuns = Math.min(BATCH, runs - done);
    const details = await fc.check(p.make(), { numRuns, seed: (seed + batch) | 0 });
    if (details.failed) failures.push(`${label}: ${p.name}\n${fc.defaultReportMessage(details)}`);
    done += numRuns;
    if (runs > BATCH) process.stderr.write(`\r  ${label}: ${p.name.slice(0, 60)} ${done}/${runs}   `);
  }
  if (runs > BATCH) process.stderr.write("\n");
  return failures;
}

async function runTarget(t: FuzzTarget, o: Options) {
  const total = t.properties.reduce((s, p) => s + (p.weight ?? 1), 0);
  const started = performance.now();
  let count = 0;
  const failures: string[] = [];
  for (const [i, p] of t.properties.entries()) {
    const runs = Math.max(1, Math.round((o.runs * (p.weight ?? 1)) / total));
    failures.push(...(await runProperty(p, runs, o.seed + i * 7919, t.name)));
    count += runs;
  }
  return { count, failures, seconds: (performance.now() - started) / 1000 };
}

/** Time per byte: the best of 5 samples of at least 10 ms each, after a 20 ms warm-up (a busy machine only adds time). */
async function nsPerByte(shape: ScalingShape, n: number): Promise<{ bytes: number; ns: number }> {
  const input = shape.make(n);
  const bytes = shape.bytes(input);
  const sample = async (ms: number) => {
    let reps = 0;
    const start = performance.now();
    while (reps < 2 || performance.now() - start < ms) {
      await shape.run(input);
      reps++;
    }
    return ((performance.now() - start) * 1e6) / reps / bytes;
  };
  await sample(20);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) best = Math.min(best, await sample(10));
  return { bytes, ns: best };
}

async function scalingTable(t: FuzzTarget): Promise<string[]> {
  const lines: string[] = [];
  for (const s of t.scaling) {
    const cells: { bytes: number; ns: number }[] = [];
    for (const k of [1, 2, 4, 8]) cells.push(await nsPerByte(s, s.base * k));
    const ratio = cells[3]!.ns / cells[0]!.ns;
    lines.push(
      `    ${s.name.padEnd(48)} ${cells.map((c) => `${String(c.bytes).padStart(7)} B ${c.ns.toFixed(1).padStart(7)} ns/B`).join(" | ")} | 8n/n ${ratio.toFixed(2)}`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const unknown = o.only?.filter((n) => !allTargets.some((t) => t.name === n)) ?? [];
  if (unknown.length) usage(`no fuzz target ${unknown.join(", ")}`);
  const targets = allTargets.filter((t) => !o.only || o.only.includes(t.name));
  console.log(`fuzz: ${o.runs} inputs per parser, seed ${o.seed}`);
  const failures: string[] = [];
  const report: string[] = [];
  for (const t of targets) {
    const r = await runTarget(t, o);
    failures.push(...r.failures);
    const line = `${t.name.padEnd(14)} ${String(r.count).padStart(9)} inputs  ${String(r.failures.length).padStart(2)} failures  ${r.seconds.toFixed(1).padStart(7)} s  ${Math.round(r.count / r.seconds)} inputs/s`;
    console.log(line);
    report.push(line);
    if (o.scaling && t.scaling.length) {
      const table = await scalingTable(t);
      for (const l of table) console.log(l);
    }
  }
  for (const f of failures) console.error(`\nFAILED ${f}`);
  console.log(failures.length ? `\n${failures.length} failing properties` : "\nno failures");
  process.exit(failures.length ? 1 : 0);
}

await main();
