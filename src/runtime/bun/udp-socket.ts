import { err, ok } from "../../errors.ts";
import type { OpenUdp, UdpSocket } from "../udp.ts";

/** Bun.udpSocket behind the runtime interface. */
export const openUdp: OpenUdp = async (host, port) => {
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
    const udp: UdpSocket = {
      port: socket.port,
      send: (data, p, address) => {
        try {
          return socket.send(data, p, address);
        } catch {
          return false;
        }
      },
      sendMany: (batch) => {
        try {
          return socket.sendMany(batch);
        } catch {
          return 0;
        }
      },
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
};
