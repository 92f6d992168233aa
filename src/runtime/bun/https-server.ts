import { err, ok } from "../../errors.ts";
import type { ServeHttps } from "../https-server.ts";

/** Bun.serve with TLS only (TLS 1.2 or later). */
export const serveHttps: ServeHttps = (o) => {
  try {
    const server = Bun.serve({
      hostname: o.host,
      port: o.port,
      tls: { cert: o.certPem, key: o.keyPem, lowMemoryMode: false },
      // Event streams send a comment every 15 s, well inside this.
      idleTimeout: 60,
      maxRequestBodySize: 1024 * 1024,
      fetch: (request, server) => o.fetch(request, { address: server.requestIP(request)?.address ?? "" }),
    });
    return ok({ port: server.port ?? o.port, stop: () => server.stop(true) });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const where = `${o.host}:${o.port}`;
    if (code === "EADDRINUSE") return err("port_in_use", `TCP ${where} (management API) is already in use: choose another --api-listen`);
    if (code === "EACCES" || code === "EPERM") return err("port_forbidden", `not allowed to listen on TCP ${where} (management API): fix --api-listen`);
    if (code === "EADDRNOTAVAIL") return err("listen_address_unavailable", `${o.host} is not an address of this machine: fix --api-listen`);
    return err("listen_failed", `cannot listen on TCP ${where} (management API): ${(e as Error).message}`);
  }
};
