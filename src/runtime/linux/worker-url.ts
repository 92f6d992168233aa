/**
 * Where a runtime's TUN reader worker is, seen from the module that starts it:
 * - from sources, and inside a `bun build --compile` binary, the `.ts` file next to the caller
 *   (the binary embeds the worker as an extra entry named "[name].[ext]" at the root of its
 *   file system, where the caller's import.meta.url, the executable, also is);
 * - in the esbuild bundle (caller is dist/*.mjs) the worker's own entry, dist/<bundled>.
 */
export function workerUrl(callerUrl: string, source: string, bundled: string): URL {
  return new URL(callerUrl.endsWith(".mjs") ? bundled : source, callerUrl);
}
