/** What the runtime says about how this program was started. */
export type ProgramFacts =
  /** `script`: the entry file (Bun.main); under `bun build --compile` it lies in the embedded /$bunfs/. */
  | { runtime: "bun"; execPath: string; script: string }
  /** `standalone`: a `deno compile` executable; `flags`: what `deno run` needs besides the script. */
  | { runtime: "deno"; execPath: string; script: string; standalone: boolean; flags: readonly string[] };

/** The root of the file system `bun build --compile` embeds its entries in. */
const BUN_EMBEDDED_ROOT = "/$bunfs/";

/**
 * The argv prefix that starts this same program again:
 * - `bun src/main.ts`, `bun dist/gw.mjs`: Bun and the entry file;
 * - `deno run -A dist/gw.mjs` (or src/main.ts): Deno, `run`, its flags and the entry file (the
 *   child inherits the working directory, so it finds the same deno.json);
 * - an executable (`bun build --compile`, `deno compile`): the executable alone, which runs its
 *   embedded entry with the arguments that follow.
 */
export function selfArgv(facts: ProgramFacts): string[] {
  if (facts.runtime === "bun") return facts.script.startsWith(BUN_EMBEDDED_ROOT) ? [facts.execPath] : [facts.execPath, facts.script];
  return facts.standalone ? [facts.execPath] : [facts.execPath, "run", ...facts.flags, facts.script];
}
