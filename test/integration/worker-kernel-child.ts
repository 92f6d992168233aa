/**
 * A worker's side of the worker-kernel test, started by worker-kernel-probe.ts with the runtime's
 * spawn: TUN queue 1 at fd 3 and UDP group member 1 at fd 4. It adopts both through the runtime
 * (adoptTun, adoptUdp) and tells its parent, over the IPC channel, what arrives; on request it
 * writes through the adopted TUN device. Every UDP datagram gets three answers from the adopted
 * socket: "reply:" by send(), "many1:" and "many2:" by one sendMany() (same size, one peer: a GSO run).
 *   worker-kernel-child.ts '{"name":"gwk0","mtu":1400,"vnetHeader":true}'
 */
import { runtime } from "../../src/runtime/current.ts";
import { ECHO_IDENT, echoRequest, parsePacket, udpPacket } from "./worker-kernel-packets.ts";

const TUN_FD = 3;
const UDP_FD = 4;

export type ChildMessage =
  | { type: "ready"; pid: number; tun: string; udp: string; udpPort?: number }
  | { type: "tun"; destination: string; text: string }
  | { type: "echo-reply"; source: string; destination: string; ident: number; sequence: number }
  | { type: "udp"; text: string; address: string; port: number; sent: number; gsoDatagrams?: number };

export type ParentMessage =
  | { type: "ping"; source: number[]; destination: number[]; sequence: number }
  | { type: "write-udp"; source: number[]; destination: number[]; port: number; texts: string[] }
  | { type: "exit" };

const tunInfo = JSON.parse(process.argv[2]!) as { name: string; mtu: number; vnetHeader: boolean };
const linked = runtime.workerProcesses.parentLink();
if (!linked.ok) throw linked.error;
const parent = linked.value;
const tell = (message: ChildMessage) => parent.send(message);

const tun = await runtime.adoptTun({ fd: TUN_FD, ...tunInfo, log: (line) => console.error(line) });
const udp = await runtime.adoptUdp(UDP_FD);
const encoder = new TextEncoder();

if (tun.ok) {
  tun.value.onPackets((packets) => {
    for (const packet of packets) {
      const p = parsePacket(packet);
      if (p.kind === "udp" && p.text.startsWith("gwq:")) tell({ type: "tun", destination: p.destination, text: p.text });
      if (p.kind === "echo-reply" && p.ident === ECHO_IDENT) tell({ type: "echo-reply", source: p.source, destination: p.destination, ident: p.ident, sequence: p.sequence });
    }
  });
}
if (udp.ok) {
  const socket = udp.value;
  socket.onDatagram((data, port, address) => {
    const text = new TextDecoder().decode(data);
    let sent = socket.send(encoder.encode(`reply:${text}`), port, address) ? 1 : 0;
    sent += socket.sendMany([encoder.encode(`many1:${text}`), port, address, encoder.encode(`many2:${text}`), port, address]);
    // Bun's socket says how its sends went (BunUdpSocket.gso): the sendMany pair should be one GSO send.
    const gso = (socket as { gso?: { gsoDatagrams: number } | null }).gso;
    tell({ type: "udp", text, address, port, sent, gsoDatagrams: gso?.gsoDatagrams });
  });
}

parent.onMessage((raw) => {
  const message = raw as ParentMessage;
  if (message.type === "ping" && tun.ok) {
    tun.value.write(echoRequest(message.source, message.destination, ECHO_IDENT, message.sequence));
  } else if (message.type === "write-udp" && tun.ok) {
    tun.value.writeMany(message.texts.map((text, i) => udpPacket(message.source, 5000 + i, message.destination, message.port, text)));
  } else if (message.type === "exit") {
    if (tun.ok) tun.value.close();
    if (udp.ok) udp.value.close();
    parent.close();
    setTimeout(() => process.exit(0), 50);
  }
});

tell({
  type: "ready",
  pid: process.pid,
  tun: tun.ok ? "ok" : `${tun.error.code}: ${tun.error.message}`,
  udp: udp.ok ? "ok" : udp.error.code,
  udpPort: udp.ok ? udp.value.port : undefined,
});
