import { err, ok, type Result } from "../errors.ts";

/** IPv4 addresses as unsigned 32-bit numbers: cheap to compare and to use as Map keys. */

export function parseIpv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value >>> 0;
}

export function formatIpv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

export function prefixToMask(prefixLength: number): number {
  return prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
}

export interface Ipv4Cidr {
  /** Network address (host bits cleared). */
  network: number;
  prefixLength: number;
}

/** Parses "198.51.100.0/24" (also "/255.255.255.0" and a bare address = /32). Host bits must be zero. */
export function parseCidr(text: string): Result<Ipv4Cidr> {
  const [addrText, lenText, extra] = text.trim().split("/");
  const address = parseIpv4(addrText ?? "");
  if (address === undefined || extra !== undefined) {
    return err("invalid_cidr", `"${text}" is not an IPv4 network: write it as 198.51.100.0/24`);
  }
  let prefixLength = 32;
  if (lenText !== undefined) {
    if (/^[0-9]{1,2}$/.test(lenText) && Number(lenText) <= 32) prefixLength = Number(lenText);
    else {
      const mask = parseIpv4(lenText);
      const len = mask === undefined ? undefined : maskToPrefix(mask);
      if (len === undefined) {
        return err("invalid_cidr", `"${text}": the prefix must be 0-32 or a contiguous dotted mask`);
      }
      prefixLength = len;
    }
  }
  if ((address & ~prefixToMask(prefixLength)) >>> 0 !== 0) {
    const network = formatIpv4((address & prefixToMask(prefixLength)) >>> 0);
    return err("invalid_cidr", `"${text}" has host bits set: did you mean ${network}/${prefixLength}?`);
  }
  return ok({ network: address, prefixLength });
}

export function maskToPrefix(mask: number): number | undefined {
  const inverted = ~mask >>> 0;
  if ((inverted & (inverted + 1)) !== 0) return undefined; // not contiguous
  return 32 - Math.log2(inverted + 1);
}

export function formatCidr(cidr: Ipv4Cidr): string {
  return `${formatIpv4(cidr.network)}/${cidr.prefixLength}`;
}

/** "198.51.100.0/255.255.255.0": the form the spec's X-CSTP-Split-Include shows. */
export function formatCidrDottedMask(cidr: Ipv4Cidr): string {
  return `${formatIpv4(cidr.network)}/${formatIpv4(prefixToMask(cidr.prefixLength))}`;
}

export function cidrContains(cidr: Ipv4Cidr, address: number): boolean {
  return ((address & prefixToMask(cidr.prefixLength)) >>> 0) === cidr.network;
}
