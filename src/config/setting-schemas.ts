import { z } from "zod";
import { parseCidr, parseIpv4 } from "../net/ipv4.ts";
import { parseIpv6Cidr } from "../net/ipv6.ts";
import { POOL6_MAX_PREFIX, POOL6_MIN_PREFIX } from "../net/address-pool6.ts";

/** Value schemas shared by several settings, and the HOST:PORT helpers the serve code reads them with. */

/** Where a client certificate names its user (ocserv's cert-user-oid). */
export const CERT_USER_ATTRIBUTES = ["cn", "email", "uid", "san-email"] as const;

export const ipAddressSchema = z.string().refine((s) => s === "::" || parseIpv4(s) !== undefined || /^[0-9a-fA-F:]+$/.test(s), "must be an IP address");

export const portSchema = z.number().int().min(1).max(65535);

/** HOST:PORT (IPv6 in brackets: [::1]:8443). */
export const hostPortSchema = z.string().superRefine((text, ctx) => {
  const parsed = parseHostPort(text);
  if (!parsed) ctx.addIssue({ code: "custom", message: `"${text}" is not HOST:PORT (e.g. 127.0.0.1:8443)` });
});

export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const host = m[1] ?? m[2]!;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  if (!m[1] && parseIpv4(host) === undefined && host !== "localhost") return undefined;
  return { host: host === "localhost" ? "127.0.0.1" : host, port };
}

/** HOST:PORT as parseHostPort reads it (IPv6 in brackets). */
export function formatHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

export const tunNameSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/, "a TUN name is 1-15 characters: letters, digits, '_', '.', '-'");

export const poolSchema = z.string().superRefine((text, ctx) => {
  const r = parseCidr(text);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
  else if (r.value.prefixLength > 30) ctx.addIssue({ code: "custom", message: "the pool must be /30 or larger" });
});

export const pool6Schema = z.string().superRefine((text, ctx) => {
  const r = parseIpv6Cidr(text);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
  else if (r.value.prefixLength < POOL6_MIN_PREFIX || r.value.prefixLength > POOL6_MAX_PREFIX) {
    ctx.addIssue({ code: "custom", message: `the IPv6 pool must be /${POOL6_MIN_PREFIX} to /${POOL6_MAX_PREFIX} (e.g. 2001:db8:10::/64)` });
  }
});

export const fileSchema = z.string().min(1);

/** An http(s) URL without query or fragment, named in its messages. */
export const httpsUrlSchema = (what: string) =>
  z.string().superRefine((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return ctx.addIssue({ code: "custom", message: `${what} "${text}" is not a URL` });
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") ctx.addIssue({ code: "custom", message: `${what} must be an http(s) URL` });
    if (url.search || url.hash) ctx.addIssue({ code: "custom", message: `${what} must not have a query or fragment` });
  });
