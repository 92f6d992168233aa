import { z } from "zod";
import { parseCidr, parseIpv4 } from "../net/ipv4.ts";

/**
 * Everything `gw serve` needs, from flags and environment, validated at once.
 * Defaults are the embedded ones: `gw serve` with no arguments gives a working gateway.
 */
export const gatewayConfigSchema = z
  .object({
    dataDir: z.string().min(1).default("./gw-data"),
    listen: z
      .string()
      .refine((s) => s === "::" || parseIpv4(s) !== undefined || /^[0-9a-fA-F:]+$/.test(s), "listen address must be an IP address")
      .default("0.0.0.0"),
    port: z.number().int().min(1).max(65535).default(443),
    /** DTLS on UDP: on by default, on the TCP port unless udpPort says otherwise. */
    dtls: z.boolean().default(true),
    udpPort: z.number().int().min(1).max(65535).optional(),
    certFile: z.string().optional(),
    keyFile: z.string().optional(),
    tunName: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,15}$/, "a TUN name is 1-15 characters: letters, digits, '_', '.', '-'")
      .default("gw0"),
    pool: z
      .string()
      .superRefine((text, ctx) => {
        const r = parseCidr(text);
        if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
        else if (r.value.prefixLength > 30) ctx.addIssue({ code: "custom", message: "the pool must be /30 or larger" });
      })
      .default("10.10.0.0/24"),
    /** How long a cookie stays valid while its session has no connection (seconds). */
    cookieTimeout: z.number().int().min(10).max(86400 * 7).default(300),
    mtu: z.number().int().min(576).max(9000).default(1400),
    dpd: z.number().int().min(0).max(3600).default(30),
    keepalive: z.number().int().min(0).max(86400).default(20),
    mobileDpd: z.number().int().min(0).max(86400).default(600),
  })
  .strict()
  .refine((c) => (c.certFile === undefined) === (c.keyFile === undefined), {
    error: "--cert and --key go together: give both, or neither to use the generated certificate",
    path: ["certFile"],
  });

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
