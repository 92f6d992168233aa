import type { TLSSocket } from "node:tls";
import { logLine, type Log } from "../log/log-line.ts";

/** RFC 5705 / RFC 8446 §7.5 exporter label openconnect and ocserv use, no context (docs/protocol.md §7.4). */
const LABEL = "EXPORTER-openconnect-psk";

/**
 * Derives the PSK-NEGOTIATE key from a TLS connection. A runtime whose TLS cannot export keying
 * material gets no PSK (the CONNECT then offers legacy DTLS), and the log says so once.
 */
export function createPskExporter(log: Log): (socket: TLSSocket) => Uint8Array | undefined {
  let warned = false;
  return (socket) => {
    try {
      // No context argument at all: "no context" differs from an empty one in TLS 1.2 (RFC 5705).
      const exporter = socket.exportKeyingMaterial as (length: number, label: string) => Buffer;
      const psk = exporter.call(socket, 32, LABEL);
      if (psk?.length === 32) return psk;
      throw new Error(`exporter returned ${psk?.length ?? 0} bytes`);
    } catch (e) {
      if (!warned) {
        warned = true;
        log(logLine`TLS keying-material export unavailable (${(e as Error).message}): PSK-NEGOTIATE DTLS is not offered, legacy DTLS is`);
      }
      return undefined;
    }
  };
}
