/**
 * The shape every fuzz target shares: the test files (test/fuzz/*.test.ts) run its properties
 * with a few hundred inputs per run, scripts/fuzz/run.ts with a million, and the script also
 * times its worst-case shapes at growing sizes (time per byte must stay flat: linear parsers).
 */
import type fc from "fast-check";

export interface FuzzProperty {
  name: string;
  /** A fresh property (a factory, so that state such as an API fixture is new for every run). */
  make(): fc.IRawProperty<any, boolean>;
  /** Share of the parser's runs this property gets in the script (default 1). */
  weight?: number;
  /** Inputs per `bun test` run (modest: the whole folder must stay well under a minute). */
  testRuns: number;
}

/** A worst-case input shape for the linear-time table: `make(n)` is about n bytes. */
export interface ScalingShape<T = any> {
  name: string;
  make(n: number): T;
  bytes(input: T): number;
  run(input: T): unknown;
  /** Smallest n of the n, 2n, 4n, 8n series. */
  base: number;
}

export interface FuzzTarget {
  /** The parser under test, as the script's --only and its report name it. */
  name: string;
  properties: FuzzProperty[];
  scaling: ScalingShape[];
}

/** Throws (failing the property) with a message naming what was broken. */
export function check(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) throw new Error(typeof message === "string" ? message : message());
}

/** A rejection must be a typed error: a string code (with the expected prefix) and a non-empty message. */
export function checkTypedError(e: unknown, codePrefix: string | readonly string[]): void {
  const x = e as { code?: unknown; message?: unknown } | undefined;
  check(x !== undefined && typeof x.code === "string", () => `rejection without a string code: ${String(e)}`);
  check(typeof x!.message === "string" && (x!.message as string).length > 0, `rejection ${String(x!.code)} without a message`);
  const prefixes = typeof codePrefix === "string" ? [codePrefix] : codePrefix;
  check(
    prefixes.some((p) => (x!.code as string).startsWith(p)),
    () => `unexpected error code ${String(x!.code)} (expected one of ${prefixes.join(", ")})`,
  );
}
