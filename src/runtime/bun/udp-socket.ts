import { err, ok, type Result } from "../../errors.ts";
import type { OpenUdp, UdpSocket } from "../udp.ts";
import { GsoSender, type GsoStats } from "./udp-gso-sender.ts";
import { loadUdpLibc } from "./udp-libc.ts";

/** Bun's socket plus how its sends went (UDP GSO or the plain path); null stats when GSO was never tried. */
export interface BunUdpSocket extends UdpSocket {
  readonly gso: GsoStats | null;
}

/** Bun.udpSocket behind the runtime interface; on Linux, sendMany sends same-size runs with UDP GSO. */
export async function openBunUdp(host: string, port: number): Promise<Result<BunUdpSocket>> {
  let handler: (data: Uint8Array, port: number, address: string) => void = () => {};
  try {
    const socket = await Bun.udpSocket({
      hostname: host,
      port,
      binaryType: "uint8array",
      socket: {
        data(_s, data, remotePort, remoteAddress) {
          handler(data, remotePort, remoteAddress);
        },
      },
    });
    const plainSendMany = (batch: (Uint8Array | number | string)[]): number => {
      try {
        return socket.sendMany(batch);
      } catch {
        return 0;
      }
    };
    // Bun has `fd` on its UDP socket but leaves it out of its type declarations.
    const fd = (socket as unknown as { readonly fd?: number }).fd;
    const gso = gsoSender(fd, socket.address.family, plainSendMany);
    const udp: BunUdpSocket = {
      port: socket.port,
      gso: gso?.stats ?? null,
      send: (data, p, address) => {
        try {
          return socket.send(data, p, address);
        } catch {
          return false;
        }
      },
      sendMany: gso === null ? plainSendMany : (batch) => gso.sendMany(batch),
      onDatagram: (h) => {
        handler = h;
      },
      close: () => socket.close(),
    };
    return ok(udp);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") return err("udp_port_in_use", `UDP ${host}:${port} is already in use: stop the other service, or start gw with --no-dtls`);
    if (code === "EACCES" || code === "EPERM") return err("udp_forbidden", `not allowed to bind UDP ${host}:${port}: run as root or grant CAP_NET_BIND_SERVICE`);
    return err("udp_failed", `cannot bind UDP ${host}:${port}: ${(e as Error).message}`);
  }
}

export const openUdp: OpenUdp = openBunUdp;

/** The GSO sender where it can work (Linux, a known fd and family, libc loadable); null means plain sends only. */
function gsoSender(fd: number | undefined, family: string | undefined, plain: (batch: (Uint8Array | number | string)[]) => number): GsoSender | null {
  if (process.platform !== "linux" || typeof fd !== "number" || fd < 0) return null;
  if (family !== "IPv4" && family !== "IPv6") return null;
  try {
    return new GsoSender(fd, family, loadUdpLibc(), plain);
  } catch {
    return null; // no libc to bind (an unusual build): Bun's sendmmsg alone still works
  }
}
