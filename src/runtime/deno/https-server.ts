import { err, ok } from "../../errors.ts";
import type { ServeHttps } from "../https-server.ts";

/**
 * Deno.serve with TLS. Deno's shutdown waits for every response to end, and an event stream
 * never does: each streamed body is passed through a stream this adapter can end, and stop()
 * ends them all (closing the client's side and cancelling the app's) before it shuts down.
 */
export const serveHttps: ServeHttps = (o) => {
  const open = new Set<() => void>();
  const endable = (response: Response): Response => {
    if (!response.body) return response;
    const source = response.body.getReader();
    let end = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        end = () => {
          open.delete(end);
          try {
            c.close();
          } catch {
            // already closed or errored by the client going away
          }
          void source.cancel().catch(() => {});
        };
        open.add(end);
      },
      async pull(c) {
        const { done, value } = await source.read();
        if (!open.has(end)) return; // ended by stop() while waiting
        if (done) end();
        else c.enqueue(value);
      },
      cancel: () => end(),
    });
    return new Response(body, response);
  };
  try {
    const server = Deno.serve(
      { hostname: o.host, port: o.port, cert: o.certPem, key: o.keyPem, onListen: () => {} },
      async (request, info) => endable(await o.fetch(request, { address: info.remoteAddr.hostname })),
    );
    return ok({
      port: server.addr.port,
      async stop() {
        for (const end of [...open]) end();
        await server.shutdown();
      },
    });
  } catch (e) {
    const name = (e as Error).name;
    const where = `${o.host}:${o.port}`;
    if (name === "AddrInUse") return err("port_in_use", `TCP ${where} (management API) is already in use: choose another --api-listen`);
    if (name === "PermissionDenied") return err("port_forbidden", `not allowed to listen on TCP ${where} (management API): fix --api-listen`);
    if (name === "AddrNotAvailable") return err("listen_address_unavailable", `${o.host} is not an address of this machine: fix --api-listen`);
    return err("listen_failed", `cannot listen on TCP ${where} (management API): ${(e as Error).message}`);
  }
};
