/**
 * Where an IPv6 packet's transport header is (caller checked isIpv6Packet). A filter keeps one
 * instance and calls locate() per packet: the answer lands in its fields, no object per packet.
 */
export class Ipv6Transport {
  /** The upper-layer protocol (6 TCP, 17 UDP, 58 ICMPv6, ...) after the extension headers. */
  protocol = 0;
  /** Offset of the transport header. */
  offset = 0;
  /** A fragment after the first: it carries no transport header. */
  laterFragment = false;

  /**
   * Walks the extension headers of the IPv6 packet at p[base] (0, or where an ICMPv6 error quotes
   * one); false when a header runs past the bytes (or there are too many).
   */
  locate(p: Uint8Array, base = 0): boolean {
    if (base + 40 > p.length) return false;
    let next = p[base + 6]!;
    let at = base + 40;
    this.laterFragment = false;
    for (let hops = 0; hops < MAX_EXTENSION_HEADERS; hops++) {
      if (next === HOP_BY_HOP || next === ROUTING || next === DESTINATION_OPTIONS) {
        if (at + 8 > p.length) return false;
        next = p[at]!;
        at += (p[at + 1]! + 1) * 8;
      } else if (next === FRAGMENT) {
        if (at + 8 > p.length) return false;
        // Fragment offset: the top 13 bits of bytes 2-3. A later fragment's payload is not a header.
        if ((((p[at + 2]! << 8) | p[at + 3]!) & 0xfff8) !== 0) this.laterFragment = true;
        next = p[at]!;
        at += 8;
        if (this.laterFragment) break;
      } else if (next === AUTHENTICATION) {
        if (at + 8 > p.length) return false;
        next = p[at]!;
        at += (p[at + 1]! + 2) * 4;
      } else {
        break;
      }
    }
    if (at > p.length || (!this.laterFragment && isExtensionHeader(next))) return false;
    this.protocol = next;
    this.offset = at;
    return true;
  }
}

const HOP_BY_HOP = 0;
const ROUTING = 43;
const FRAGMENT = 44;
const AUTHENTICATION = 51;
const DESTINATION_OPTIONS = 60;
/** More than this many is not a real packet (RFC 8200 expects at most one of each, destination options twice). */
const MAX_EXTENSION_HEADERS = 8;

const isExtensionHeader = (n: number): boolean => n === HOP_BY_HOP || n === ROUTING || n === FRAGMENT || n === AUTHENTICATION || n === DESTINATION_OPTIONS;

export const ICMPV6 = 58;

/** ICMPv6 errors (destination unreachable, packet too big, time exceeded, parameter problem): types below 128 quote a packet. */
export const isIcmp6ErrorType = (type: number): boolean => type >= 1 && type <= 4;
export const isIcmp6EchoType = (type: number): boolean => type === 128 || type === 129;

/** Reads the four words of an address at byte `at` into out[0..3]. */
export function readAddressWords(p: Uint8Array, at: number, out: Uint32Array): void {
  for (let w = 0; w < 4; w++, at += 4) out[w] = ((p[at]! << 24) | (p[at + 1]! << 16) | (p[at + 2]! << 8) | p[at + 3]!) >>> 0;
}
