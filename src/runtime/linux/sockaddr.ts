/**
 * sockaddr_in / sockaddr_in6 as Linux lays them out (family in host order, port in network order),
 * built from the address text a UDP socket reports. The family follows the socket's own: an IPv4
 * peer of an IPv6 socket becomes ::ffff:a.b.c.d; an IPv6 peer of an IPv4 socket cannot be reached.
 */
import { AF_INET, AF_INET6 } from "./tun-libc.ts";
import { formatIpv6 } from "../../net/ipv6.ts";

/** Room for either form (sockaddr_in6 is the larger). */
export const SOCKADDR_BYTES = 28;
export const SOCKADDR_IN_BYTES = 16;
export const SOCKADDR_IN6_BYTES = 28;

export type SocketFamily = "IPv4" | "IPv6";

/**
 * Writes the sockaddr for `address` (port left 0: writeSockaddrPort sets it) into `out`
 * (SOCKADDR_BYTES long) and returns its length, or 0 when the address cannot be expressed for a
 * socket of this family (not an address, a zone index such as fe80::1%eth0, IPv6 on IPv4).
 */
export function encodeSockaddr(out: Uint8Array, address: string, family: SocketFamily): number {
  out.fill(0);
  const v4 = parseIpv4(address);
  if (family === "IPv4") {
    if (v4 === null) return 0;
    out[0] = AF_INET & 0xff;
    out[1] = AF_INET >> 8;
    out.set(v4, 4);
    return SOCKADDR_IN_BYTES;
  }
  out[0] = AF_INET6 & 0xff;
  out[1] = AF_INET6 >> 8;
  if (v4 !== null) {
    out[18] = 0xff;
    out[19] = 0xff;
    out.set(v4, 20);
    return SOCKADDR_IN6_BYTES;
  }
  const v6 = parseIpv6(address);
  if (v6 === null) return 0;
  out.set(v6, 8);
  return SOCKADDR_IN6_BYTES;
}

/** Sets the port (network byte order) of a sockaddr_in or sockaddr_in6 that starts at `at` in `out`. */
export function writeSockaddrPort(out: Uint8Array, port: number, at = 0): void {
  out[at + 2] = (port >> 8) & 0xff;
  out[at + 3] = port & 0xff;
}

export function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

/** RFC 4291 text (with "::" and a dotted IPv4 tail); no zone index. */
export function parseIpv6(text: string): Uint8Array | null {
  if (text.includes("%")) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    const pieces = half.split(":");
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIpv4(piece);
        if (v4 === null) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return null;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    bytes[i * 2] = all[i]! >> 8;
    bytes[i * 2 + 1] = all[i]! & 0xff;
  }
  return bytes;
}

/**
 * A received datagram's source: the sockaddr_in or sockaddr_in6 at `at` in `bytes`, as address
 * text and port; null for another family. An IPv4 peer of a dual-stack socket (::ffff:a.b.c.d)
 * reads as a.b.c.d, which encodeSockaddr maps back for the same socket.
 */
export function readSockaddr(bytes: Uint8Array, at = 0): { address: string; port: number } | null {
  const family = sockaddrFamily(bytes, at);
  const port = (bytes[at + 2]! << 8) | bytes[at + 3]!;
  if (family === AF_INET) return { address: dotted(bytes, at + 4), port };
  if (family !== AF_INET6) return null;
  const a = at + 8;
  let mapped = bytes[a + 10] === 0xff && bytes[a + 11] === 0xff;
  for (let i = 0; i < 10 && mapped; i++) mapped = bytes[a + i] === 0;
  if (mapped) return { address: dotted(bytes, a + 12), port };
  const view = new DataView(bytes.buffer, bytes.byteOffset + a, 16);
  return { address: formatIpv6([view.getUint32(0), view.getUint32(4), view.getUint32(8), view.getUint32(12)]), port };
}

/** The address family (AF_INET, AF_INET6, ...) of the sockaddr at `at`: host order, the first two bytes. */
export function sockaddrFamily(bytes: Uint8Array, at = 0): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

function dotted(bytes: Uint8Array, at: number): string {
  return `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`;
}
