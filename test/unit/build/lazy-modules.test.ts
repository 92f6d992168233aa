import { describe, expect, test } from "bun:test";
import { build, type Metafile } from "esbuild";
import { join } from "node:path";

/**
 * What a process loads at start is what its entry reaches through static imports; code behind a
 * dynamic import() loads only when asked for (and gets its own chunk in dist/). Two entries are
 * kept lean on purpose: a worker process (src/cli/worker-main.ts, picked by src/main.ts) and a
 * gateway without SAML (src/serve/saml-setup.ts imports the provider only when configured).
 */
const root = join(import.meta.dirname, "../../..");

async function graph(): Promise<Metafile> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["src/main.ts"],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    outdir: "out",
    splitting: true,
    external: ["bun:*"],
    logLevel: "silent",
  });
  return result.metafile;
}

/** Every input an entry reaches through static imports (import statements and require calls). */
function staticClosure(meta: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of meta.inputs[file]?.imports ?? []) {
      if (imported.kind !== "dynamic-import" && !imported.external) todo.push(imported.path);
    }
  }
  return seen;
}

/** The first test waits for esbuild's whole bundle (about 4 s here, more on a busy machine): not a timing check. */
const BUILD_MS = 60_000;

const inside = (files: Set<string>, pattern: RegExp) => [...files].filter((f) => pattern.test(f));

describe("modules a process loads at start", () => {
  const bundled = graph();

  test("src/main.ts reaches neither the CLI's commands nor the worker's entry statically", async () => {
    const meta = await bundled;
    const files = staticClosure(meta, "src/main.ts");
    expect(inside(files, /^src\/cli\//)).toEqual([]);
    expect(files.has("src/serve/worker-argv.ts")).toBe(true);
  }, BUILD_MS);

  test("a worker process loads no other command, no management API, web UI, SAML or store", async () => {
    const meta = await bundled;
    const files = staticClosure(meta, "src/cli/worker-main.ts");
    expect(files.has("src/serve/tunnel-worker.ts")).toBe(true); // the closure is the real one
    expect(inside(files, /^src\/(api|ui|store|import|doctor)\//)).toEqual([]);
    expect(inside(files, /^src\/cli\/(?!worker-main|worker-command|run-resolved|args|output|terminal)/)).toEqual([]);
    expect(inside(files, /node_modules\/(@node-saml|xml-crypto|hono)\//)).toEqual([]);
  }, BUILD_MS);

  test("the gateway reaches SAML's provider (node-saml) only through its dynamic import", async () => {
    const meta = await bundled;
    const files = staticClosure(meta, "src/serve/gateway.ts");
    expect(files.has("src/serve/saml-setup.ts")).toBe(true);
    expect(inside(files, /saml-provider\.ts$|node_modules\/@node-saml\//)).toEqual([]);
    const dynamic = meta.inputs["src/serve/saml-setup.ts"]!.imports.filter((i) => i.kind === "dynamic-import").map((i) => i.path);
    expect(dynamic).toEqual(["src/control/auth/saml/saml-provider.ts"]);
  }, BUILD_MS);
});
