import { createSocket } from "node:dgram";
import { err, ok, type Result } from "../../errors.ts";
import type { OpenUdp, UdpSocket } from "../udp.ts";

type Receive = (data: Uint8Array, port: number, address: string) => void;

/**
 * UDP under Deno: Deno.listenDatagram (several times node:dgram's rate under Deno), which Deno
 * offers only with --unstable-net (deno.json asks for it; `deno run` outside the repository
 * needs the flag). Without it, node:dgram, and the gateway runs at the slower rate.
 */
export const openUdp: OpenUdp = async (host, port) => {
  try {
    if ("listenDatagram" in Deno) return ok(listenDatagram(host, port));
    console.error("udp: Deno.listenDatagram needs --unstable-net (deno.json sets it for runs inside the repository); using node:dgram, which is slower");
    return ok(await dgram(host, port));
  } catch (e) {
    const name = (e as Error).name;
    const code = (e as NodeJS.ErrnoException).code;
    if (name === "AddrInUse" || code === "EADDRINUSE") return err("udp_port_in_use", `UDP ${host}:${port} is already in use: stop the other service, or start gw with --no-dtls`);
    if (name === "PermissionDenied" || code === "EACCES" || code === "EPERM") return err("udp_forbidden", `not allowed to bind UDP ${host}:${port}: run as root or grant CAP_NET_BIND_SERVICE`);
    return err("udp_failed", `cannot bind UDP ${host}:${port}: ${(e as Error).message}`);
  }
};

function listenDatagram(host: string, port: number): UdpSocket {
  const conn = Deno.listenDatagram({ hostname: host, port, transport: "udp" });
  let handler: Receive = () => {};
  let open = true;
  void (async () => {
    try {
      for await (const [data, from] of conn) handler(data, (from as Deno.NetAddr).port, (from as Deno.NetAddr).hostname);
    } catch (e) {
      if (open) console.error(`udp ${host}:${port}: receive loop ended: ${(e as Error).message}`);
    }
  })();
  const send = (data: Uint8Array, p: number, address: string) => {
    // Deno's send is asynchronous; a refusal shows up later and is dropped like a full buffer.
    conn.send(data, { transport: "udp", hostname: address, port: p }).catch(() => {});
    return open;
  };
  return {
    port: (conn.addr as Deno.NetAddr).port,
    send,
    sendMany(batch) {
      let sent = 0;
      for (let i = 0; i + 2 < batch.length; i += 3) {
        if (send(batch[i] as Uint8Array, batch[i + 1] as number, batch[i + 2] as string)) sent++;
      }
      return sent;
    },
    onDatagram: (h) => void (handler = h),
    close() {
      if (!open) return;
      open = false;
      conn.close();
    },
  };
}

function dgram(host: string, port: number): Promise<UdpSocket> {
  const socket = createSocket({ type: host.includes(":") ? "udp6" : "udp4" });
  let handler: Receive = () => {};
  socket.on("message", (data, from) => handler(data, from.port, from.address));
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => {
      socket.off("error", reject);
      const send = (data: Uint8Array, p: number, address: string) => {
        socket.send(data, p, address);
        return true;
      };
      resolve({
        port: socket.address().port,
        send,
        sendMany(batch) {
          let sent = 0;
          for (let i = 0; i + 2 < batch.length; i += 3) if (send(batch[i] as Uint8Array, batch[i + 1] as number, batch[i + 2] as string)) sent++;
          return sent;
        },
        onDatagram: (h) => void (handler = h),
        close: () => socket.close(),
      });
    });
  });
}
