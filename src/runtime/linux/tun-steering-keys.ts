import type { Ipv6Words } from "../../net/ipv6.ts";

/**
 * The steering maps' keys, as the program (tun-steering-program.ts) computes them from a packet.
 * Addresses are the gateway's own numbers: an IPv4 address as a u32 (10.0.0.5 is 0x0a000005),
 * an IPv6 address as four u32 words, the same values the program's packet loads produce.
 */

/** The IPv4 map's key (offset in the pool), or undefined when the address is not in base .. base + size - 1. */
export function ipv4SteeringKey(address: number, base: number, size: number): number | undefined {
  const offset = (address - base) >>> 0;
  return offset < size ? offset : undefined;
}

/** The IPv6 map's key (the last word), or undefined when the first three words are not the pool's. */
export function ipv6SteeringKey(address: Ipv6Words, base: readonly [number, number, number]): number | undefined {
  return address[0] === base[0] && address[1] === base[1] && address[2] === base[2] ? address[3] : undefined;
}

/**
 * A u32 as the map stores it: in host order, as the program writes the key register to the
 * stack (Uint32Array uses the host's order, so this holds on either endianness).
 */
export function u32Bytes(value: number): Uint8Array {
  return new Uint8Array(Uint32Array.of(value >>> 0).buffer);
}
