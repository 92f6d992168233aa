import { err, ok } from "../../errors.ts";
import type { ServeHttps } from "../https-server.ts";

/**
 * Deno.serve with TLS. Deno's shutdown waits for every response to end, and an event stream
 * never does: each streamed body is passed through a stream this adapter can close, and stop()
 * closes them all before it shuts the server down.
 */
export const serveHttps: ServeHttps = (o) => {
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const closable = (response: Response): Response => {
    if (!response.body) return response;
    const reader = response.body.getReader();
    let self: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => void open.add((self = c)),
      async pull(c) {
        const { done, value } = await reader.read();
        if (!open.has(self)) return void reader.cancel(); // closed by stop() meanwhile
        if (done) {
          open.delete(self);
          c.close();
        } else c.enqueue(value);
      },
      cancel(reason) {
        open.delete(self);
        return reader.cancel(reason);
      },
    });
    return new Response(body, response);
  };
  try {
    const server = Deno.serve(
      { hostname: o.host, port: o.port, cert: o.certPem, key: o.keyPem, onListen: () => {} },
      async (request: Request) => closable(await o.fetch(request)),
    );
    return ok({
      port: server.addr.port,
      async stop() {
        for (const c of open) {
          try {
            c.close();
          } catch {
            // already closed or errored by the client going away
          }
        }
        open.clear();
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
