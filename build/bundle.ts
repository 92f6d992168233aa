import { build } from "esbuild";
import { join } from "node:path";

/**
 * dist/gw.mjs: one ESM bundle that runs on Bun (`bun dist/gw.mjs`) and on Deno
 * (`deno run -A dist/gw.mjs`). Each runtime's TUN reader worker is its own entry
 * (dist/tun-worker-bun.mjs, dist/tun-worker-deno.mjs; see src/runtime/linux/worker-url.ts), as is Deno's
 * reader of a worker process's UDP socket (dist/udp-worker-deno.mjs), and so is
 * the portable password hasher's (dist/password-worker.mjs: every hash under Deno, the warm thread under Bun).
 * Code splitting keeps each runtime's adapters in a chunk of its own, loaded only on that
 * runtime: bun:ffi must never be linked under Deno. Chunks sit next to gw.mjs, so copy dist/ whole.
 */
export async function bundle(root: string): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: {
      gw: "src/main.ts",
      "tun-worker-bun": "src/runtime/bun/tun-worker.ts",
      "tun-worker-deno": "src/runtime/deno/tun-worker.ts",
      "udp-worker-deno": "src/runtime/deno/udp-worker.ts",
      "password-worker": "src/runtime/password-worker.ts",
    },
    outdir: join(root, "dist"),
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    external: ["bun:*"],
    // CommonJS dependencies (e.g. SAML's) call require() for node builtins; ESM has none.
    banner: { js: 'import { createRequire as __gwRequire } from "node:module"; const require = __gwRequire(import.meta.url);' },
    minifySyntax: true,
    logLevel: "warning",
  });
}
