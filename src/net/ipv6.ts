import { err, ok, type Result } from "../errors.ts";

/**
 * IPv6 addresses as four unsigned 32-bit words, most significant first: compared word by word
 * and read straight from packet bytes, with no bigint and no string per packet.
 */
export type Ipv6Words = readonly [number, number, number, number];

export interface Ipv6Cidr {
  /** Network address (host bits cleared). */
  network: Ipv6Words;
  prefixLength: number;
}

/** Parses "2001:db8::1" (also "::ffff:192.0.2.1"); undefined when it is not an IPv6 address. */
export function parseIpv6(text: string): Ipv6Words | undefined {
  const groups = parseGroups(text);
  if (!groups) return undefined;
  const word = (i: number) => ((groups[i]! << 16) | groups[i + 1]!) >>> 0;
  return [word(0), word(2), word(4), word(6)];
}

function parseGroups(text: string): number[] | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const side = (s: string, last: boolean): number[] | undefined => {
    if (s === "") return [];
    const out: number[] = [];
    const parts = s.split(":");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (last && i === parts.length - 1 && part.includes(".")) {
        const v4 = part.split(".");
        if (v4.length !== 4 || v4.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255)) return undefined;
        const b = v4.map(Number);
        out.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(part)) out.push(parseInt(part, 16));
      else return undefined;
    }
    return out;
  };
  const head = side(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? side(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}

/** RFC 5952 text: lower case, the longest run of two or more zero groups written "::". */
export function formatIpv6(a: Ipv6Words): string {
  const groups = [a[0] >>> 16, a[0] & 0xffff, a[1] >>> 16, a[1] & 0xffff, a[2] >>> 16, a[2] & 0xffff, a[3] >>> 16, a[3] & 0xffff];
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (g: number[]) => g.map((x) => x.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** The mask word `index` (0-3) of a prefix length. */
function maskWord(prefixLength: number, index: number): number {
  const bits = Math.max(0, Math.min(32, prefixLength - 32 * index));
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

/** Parses "2001:db8::/32" (a bare address is a /128). Host bits must be zero. */
export function parseIpv6Cidr(text: string): Result<Ipv6Cidr> {
  const [addrText = "", lenText, extra] = text.trim().split("/");
  const address = parseIpv6(addrText);
  const prefixLength = lenText === undefined ? 128 : /^[0-9]{1,3}$/.test(lenText) ? Number(lenText) : NaN;
  if (!address || extra !== undefined || !(prefixLength >= 0 && prefixLength <= 128)) {
    return err("invalid_cidr", `"${text}" is not an IPv6 network: write it as 2001:db8::/32`);
  }
  const network = maskAddress(address, prefixLength);
  if (!ipv6Equal(network, address)) {
    return err("invalid_cidr", `"${text}" has host bits set: did you mean ${formatIpv6(network)}/${prefixLength}?`);
  }
  return ok({ network, prefixLength });
}

export function maskAddress(a: Ipv6Words, prefixLength: number): Ipv6Words {
  return [(a[0] & maskWord(prefixLength, 0)) >>> 0, (a[1] & maskWord(prefixLength, 1)) >>> 0, (a[2] & maskWord(prefixLength, 2)) >>> 0, (a[3] & maskWord(prefixLength, 3)) >>> 0];
}

export function ipv6Equal(a: Ipv6Words, b: Ipv6Words): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

export function ipv6CidrContains(cidr: Ipv6Cidr, address: Ipv6Words): boolean {
  return ipv6Equal(maskAddress(address, cidr.prefixLength), cidr.network);
}

export function formatIpv6Cidr(cidr: Ipv6Cidr): string {
  return `${formatIpv6(cidr.network)}/${cidr.prefixLength}`;
}

/** Sixteen bytes in network order (the kernel's struct in6_addr). */
export function ipv6Bytes(a: Ipv6Words): Uint8Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < 4; i++) view.setUint32(i * 4, a[i]!);
  return bytes;
}

/**
 * A dual-stack socket (--listen ::) shows IPv4 clients as "::ffff:203.0.113.2": operators, bans
 * and logs see the IPv4 address they know.
 */
export function unmapIpv4(address: string): string {
  return address.length > 7 && address.slice(0, 7).toLowerCase() === "::ffff:" && address.includes(".") ? address.slice(7) : address;
}
