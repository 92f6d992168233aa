import type { Server } from "node:tls";
import type { Result } from "../../src/errors.ts";
import { ConnectionAdmission } from "../../src/front/connection-admission.ts";
import { FrontCounters } from "../../src/front/front-counters.ts";
import { listenTls, type TlsListenOptions } from "../../src/front/tls-listener.ts";

/**
 * The tunnel port's TLS listener on 127.0.0.1 and a free port, for tests that talk to it
 * directly: room for 100 connections, a 5 s handshake, nothing logged.
 */
export function listenTestTls(
  cert: { certPem: string; keyPem: string },
  o: Pick<TlsListenOptions, "sealing" | "onConnection">,
): Promise<Result<Server>> {
  return listenTls({
    host: "127.0.0.1",
    port: 0,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
    guard: {
      admission: new ConnectionAdmission({ maxPerAddress: 100, maxTotal: 100 }),
      counters: new FrontCounters(),
      handshakeMs: 5000,
      maxOpen: 100,
      onPause: () => {},
      onResumeError: () => {},
    },
    ...o,
  });
}
