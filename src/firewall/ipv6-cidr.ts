import { err, ok, type Result } from "../errors.ts";

/** An IPv6 network, kept as text-normalised groups: the model accepts it; enforcement comes with IPv6 in the tunnel. */
export interface Ipv6Cidr {
  /** Eight 16-bit groups, host bits cleared. */
  groups: readonly number[];
  prefixLength: number;
}

/** Parses "2001:db8::/32" (a bare address is a /128). Host bits must be zero, as for IPv4. */
export function parseIpv6Cidr(text: string): Result<Ipv6Cidr> {
  const [addrText = "", lenText, extra] = text.trim().split("/");
  const groups = parseIpv6(addrText);
  const prefixLength = lenText === undefined ? 128 : /^[0-9]{1,3}$/.test(lenText) ? Number(lenText) : NaN;
  if (!groups || extra !== undefined || !(prefixLength >= 0 && prefixLength <= 128)) {
    return err("invalid_cidr", `"${text}" is not an IPv6 network: write it as 2001:db8::/32`);
  }
  for (let bit = prefixLength; bit < 128; bit++) {
    if ((groups[bit >> 4]! >> (15 - (bit & 15))) & 1) {
      return err("invalid_cidr", `"${text}" has host bits set: clear the bits after /${prefixLength}`);
    }
  }
  return ok({ groups, prefixLength });
}

function parseIpv6(text: string): number[] | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const side = (s: string): number[] | undefined => {
    if (s === "") return [];
    const out: number[] = [];
    const parts = s.split(":");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = part.split(".");
        if (v4.length !== 4 || v4.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255)) return undefined;
        const b = v4.map(Number);
        out.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(part)) out.push(parseInt(part, 16));
      else return undefined;
    }
    return out;
  };
  const head = side(halves[0]!);
  const tail = halves.length === 2 ? side(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}
