/**
 * The part of `bun:test` the unit tests use, on Deno.test, so `deno test` runs them unchanged
 * (deno.json maps "bun:test" here; `npm run test:deno`). Not a test runner of its own: suites
 * become name prefixes, hooks run around each Deno.test, matchers follow Bun's (Jest's) meaning.
 */
import { inspect } from "node:util";

type Fn = () => unknown;

interface Suite {
  name: string;
  parent: Suite | null;
  skip: boolean;
  beforeAll: Fn[];
  afterAll: Fn[];
  beforeEach: Fn[];
  afterEach: Fn[];
  /** Tests registered under this suite that have not run yet: afterAll runs when it reaches 0. */
  pending: number;
  started: boolean;
}

const newSuite = (name: string, parent: Suite | null, skip: boolean): Suite => ({
  name,
  parent,
  skip,
  beforeAll: [],
  afterAll: [],
  beforeEach: [],
  afterEach: [],
  pending: 0,
  started: false,
});

let current = newSuite("", null, false);

const chain = (suite: Suite): Suite[] => (suite.parent ? [...chain(suite.parent), suite] : [suite]);

function registerTest(name: string, fn: Fn, skip: boolean): void {
  const suites = chain(current);
  const fullName = [...suites.map((s) => s.name).filter(Boolean), name].join(" > ");
  const ignore = skip || suites.some((s) => s.skip);
  if (!ignore) for (const s of suites) s.pending++;
  // Deno's sanitizers would fail tests that Bun passes (a timer or socket left to the hooks).
  Deno.test({ name: fullName, ignore, sanitizeOps: false, sanitizeResources: false, sanitizeExit: false }, async () => {
    for (const s of suites) {
      if (s.started) continue;
      s.started = true;
      for (const hook of s.beforeAll) await hook();
    }
    try {
      for (const s of suites) for (const hook of s.beforeEach) await hook();
      await fn();
    } finally {
      for (const s of [...suites].reverse()) for (const hook of s.afterEach) await hook();
      for (const s of [...suites].reverse()) {
        if (--s.pending === 0) for (const hook of s.afterAll) await hook();
      }
    }
  });
}

function registerSuite(name: string, body: () => void, skip: boolean): void {
  const parent = current;
  current = newSuite(name, parent, skip);
  try {
    body();
  } finally {
    current = parent;
  }
}

/** Bun's printf-style test names: %s %d %i %p %o %j, one row value each. */
function formatName(template: string, row: unknown[]): string {
  let i = 0;
  return template.replace(/%[sdipoj#%]/g, (m) => (m === "%%" ? "%" : i < row.length ? (m === "%s" ? String(row[i++]) : inspect(row[i++])) : m));
}

type TestFn = ((name: string, fn: Fn, timeout?: number) => void) & {
  skip: (name: string, fn: Fn, timeout?: number) => void;
  skipIf: (condition: boolean) => (name: string, fn: Fn, timeout?: number) => void;
  each: <T>(table: readonly T[]) => (name: string, fn: (...args: any[]) => unknown, timeout?: number) => void;
};

export const test: TestFn = Object.assign((name: string, fn: Fn) => registerTest(name, fn, false), {
  skip: (name: string, fn: Fn) => registerTest(name, fn, true),
  skipIf: (condition: boolean) => (name: string, fn: Fn) => registerTest(name, fn, condition),
  each:
    <T>(table: readonly T[]) =>
    (name: string, fn: (...args: any[]) => unknown) => {
      for (const row of table) {
        const args = Array.isArray(row) ? row : [row];
        registerTest(formatName(name, args), () => fn(...args), false);
      }
    },
});
export const it = test;

export const describe = Object.assign((name: string, body: () => void) => registerSuite(name, body, false), {
  skip: (name: string, body: () => void) => registerSuite(name, body, true),
  skipIf: (condition: boolean) => (name: string, body: () => void) => registerSuite(name, body, condition),
});

export const beforeAll = (fn: Fn) => void current.beforeAll.push(fn);
export const afterAll = (fn: Fn) => void current.afterAll.push(fn);
export const beforeEach = (fn: Fn) => void current.beforeEach.push(fn);
export const afterEach = (fn: Fn) => void current.afterEach.push(fn);

// ---- expect ----

/** expect.any(...), expect.objectContaining(...): a value that decides for itself whether it matches. */
class Asymmetric {
  constructor(
    readonly describe: string,
    readonly asymmetricMatch: (actual: unknown) => boolean,
  ) {}
  [inspect.custom]() {
    return this.describe;
  }
}

function equals(a: unknown, b: unknown): boolean {
  if (b instanceof Asymmetric) return b.asymmetricMatch(a);
  if (a instanceof Asymmetric) return a.asymmetricMatch(b);
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp && b instanceof RegExp) return String(a) === String(b);
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    return x.length === y.length && x.every((v, i) => v === y[i]);
  }
  if (a instanceof Map && b instanceof Map) {
    return a.size === b.size && [...a].every(([k, v]) => b.has(k) && equals(v, b.get(k)));
  }
  if (a instanceof Set && b instanceof Set) return a.size === b.size && [...a].every((v) => [...b].some((w) => equals(v, w)));
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => equals(v, (b as unknown[])[i]));
  // Like Bun's toEqual: a property holding undefined counts as absent.
  const keys = (o: object) => Object.keys(o).filter((k) => (o as Record<string, unknown>)[k] !== undefined);
  const ka = keys(a);
  const kb = keys(b);
  return ka.length === kb.length && ka.every((k) => equals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function matchesObject(actual: unknown, expected: unknown): boolean {
  if (expected instanceof Asymmetric) return expected.asymmetricMatch(actual);
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matchesObject(actual[i], e));
  }
  if (typeof expected === "object" && expected !== null && !(expected instanceof Date) && !ArrayBuffer.isView(expected)) {
    if (typeof actual !== "object" || actual === null) return false;
    return Object.keys(expected).every((k) => k in actual && matchesObject((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k]));
  }
  return equals(actual, expected);
}

function thrown(fn: unknown): { threw: boolean; error?: unknown } {
  try {
    (fn as () => unknown)();
    return { threw: false };
  } catch (error) {
    return { threw: true, error };
  }
}

function throwMatches(error: unknown, expected: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  if (expected === undefined) return true;
  if (typeof expected === "string") return message.includes(expected);
  if (expected instanceof RegExp) return expected.test(message);
  if (typeof expected === "function") return error instanceof expected;
  if (expected instanceof Error) return message === expected.message;
  return matchesObject(error, expected);
}

const show = (v: unknown) => inspect(v, { depth: 6, breakLength: 120 });

type Check = (actual: unknown, ...args: any[]) => [pass: boolean, message: string];

const MATCHERS = {
  toBe: (a, e) => [Object.is(a, e), `expected ${show(a)} to be ${show(e)}`],
  toEqual: (a, e) => [equals(a, e), `expected ${show(a)} to equal ${show(e)}`],
  toStrictEqual: (a, e) => [equals(a, e), `expected ${show(a)} to equal ${show(e)}`],
  toMatchObject: (a, e) => [matchesObject(a, e), `expected ${show(a)} to match ${show(e)}`],
  toContain: (a, e) => [
    typeof a === "string" ? a.includes(e) : [...(a as Iterable<unknown>)].includes(e),
    `expected ${show(a)} to contain ${show(e)}`,
  ],
  toMatch: (a, e) => [typeof a === "string" && (e instanceof RegExp ? e.test(a) : a.includes(e)), `expected ${show(a)} to match ${show(e)}`],
  toStartWith: (a, e) => [typeof a === "string" && a.startsWith(e), `expected ${show(a)} to start with ${show(e)}`],
  toEndWith: (a, e) => [typeof a === "string" && a.endsWith(e), `expected ${show(a)} to end with ${show(e)}`],
  toHaveLength: (a, e) => [(a as { length?: number })?.length === e, `expected ${show(a)} to have length ${e}`],
  toBeUndefined: (a) => [a === undefined, `expected ${show(a)} to be undefined`],
  toBeDefined: (a) => [a !== undefined, `expected ${show(a)} to be defined`],
  toBeNull: (a) => [a === null, `expected ${show(a)} to be null`],
  toBeString: (a) => [typeof a === "string", `expected ${show(a)} to be a string`],
  toBeNumber: (a) => [typeof a === "number", `expected ${show(a)} to be a number`],
  toBeInstanceOf: (a, e) => [a instanceof e, `expected ${show(a)} to be an instance of ${e?.name}`],
  toBeTruthy: (a) => [Boolean(a), `expected ${show(a)} to be truthy`],
  toBeFalsy: (a) => [!a, `expected ${show(a)} to be falsy`],
  toBeGreaterThan: (a, e) => [(a as number) > e, `expected ${show(a)} > ${e}`],
  toBeGreaterThanOrEqual: (a, e) => [(a as number) >= e, `expected ${show(a)} >= ${e}`],
  toBeLessThan: (a, e) => [(a as number) < e, `expected ${show(a)} < ${e}`],
  toBeLessThanOrEqual: (a, e) => [(a as number) <= e, `expected ${show(a)} <= ${e}`],
  toThrow: (a, e) => {
    const r = thrown(a);
    return [r.threw && throwMatches(r.error, e), r.threw ? `expected the error ${show(r.error)} to match ${show(e)}` : "expected a throw"];
  },
} satisfies Record<string, Check>;

type Matchers = { [K in keyof typeof MATCHERS]: (...args: any[]) => void };

function matchers(actual: unknown, negate: boolean): Matchers {
  const out = {} as Record<string, (...args: unknown[]) => void>;
  for (const [name, check] of Object.entries(MATCHERS) as [string, Check][]) {
    out[name] = (...args) => {
      const [pass, message] = check(actual, ...args);
      if (pass === negate) throw new Error(negate ? `not: ${message}` : message);
    };
  }
  return out as Matchers;
}

/** expect(promise).rejects / .resolves: the same matchers on the outcome, awaited. toThrow reads the rejection as the thrown error. */
function settled(promise: unknown, expectRejection: boolean): Record<string, (...args: unknown[]) => Promise<void>> {
  const out: Record<string, (...args: unknown[]) => Promise<void>> = {};
  for (const [name, check] of Object.entries(MATCHERS) as [string, Check][]) {
    out[name] = async (...args) => {
      let outcome: { rejected: boolean; value: unknown };
      try {
        outcome = { rejected: false, value: await promise };
      } catch (error) {
        outcome = { rejected: true, value: error };
      }
      if (outcome.rejected !== expectRejection) {
        throw new Error(expectRejection ? `expected a rejection, got ${show(outcome.value)}` : `expected to resolve, got the rejection ${show(outcome.value)}`);
      }
      const actual = name === "toThrow" ? () => { throw outcome.value; } : outcome.value;
      const [pass, message] = check(actual, ...args);
      if (!pass) throw new Error(message);
    };
  }
  return out;
}

export const expect = Object.assign(
  (actual: unknown) => Object.assign(matchers(actual, false), { not: matchers(actual, true), rejects: settled(actual, true), resolves: settled(actual, false) }),
  {
    any: (type: unknown) =>
      new Asymmetric(`Any<${(type as { name?: string }).name}>`, (a) =>
        type === String ? typeof a === "string" : type === Number ? typeof a === "number" : type === Boolean ? typeof a === "boolean" : a instanceof (type as new () => unknown),
      ),
    objectContaining: (e: object) => new Asymmetric(`ObjectContaining ${show(e)}`, (a) => matchesObject(a, e)),
    arrayContaining: (e: unknown[]) => new Asymmetric(`ArrayContaining ${show(e)}`, (a) => Array.isArray(a) && e.every((x) => a.some((y) => equals(y, x)))),
    stringMatching: (e: RegExp | string) => new Asymmetric(`StringMatching ${show(e)}`, (a) => typeof a === "string" && (typeof e === "string" ? a.includes(e) : e.test(a))),
    stringContaining: (e: string) => new Asymmetric(`StringContaining ${show(e)}`, (a) => typeof a === "string" && a.includes(e)),
  },
);
