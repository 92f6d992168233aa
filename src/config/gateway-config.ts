import { z } from "zod";
import { passwordHashCostStrongEnough } from "./password-hash-cost.ts";
import { samlSettingsComplete } from "./saml-settings.ts";
import { shapeOf } from "./setting-row.ts";
import { RUN_SETTINGS, SETTINGS } from "./settings-table.ts";
import { parseHostPort } from "./setting-schemas.ts";

export { CERT_USER_ATTRIBUTES, formatHostPort, hostPortSchema, parseHostPort } from "./setting-schemas.ts";

/**
 * The gateway's settings: the document behind GET/PUT /api/v1/config (stored in the data
 * directory's store) and, with dataDir, what `gw serve` runs with. Defaults are the embedded
 * ones: `gw serve` with no arguments and no stored document gives a working gateway. Each
 * setting is a row of the settings table (settings-table.ts); this is its zod shape.
 */
export const gatewaySettingsShape = shapeOf(SETTINGS);

type SettingsLike = { passwordHashMemoryKiB: number; passwordHashPasses: number; samlIdpUrl?: string; samlIdpCertFile?: string; samlBaseUrl?: string; certFile?: string; keyFile?: string; clientCaFile?: string; crlFile?: string; port: number; apiListen: string };

const certAndKeyTogether = <T extends SettingsLike>(schema: z.ZodType<T>) =>
  schema
    .refine((c) => (c.certFile === undefined) === (c.keyFile === undefined), {
      error: "--cert and --key go together: give both, or neither to use the generated certificate",
      path: ["certFile"],
    })
    .refine((c) => c.crlFile === undefined || c.clientCaFile !== undefined, {
      error: "--crl needs --client-ca: a CRL is checked against the client CA that signed it",
      path: ["crlFile"],
    })
    .refine((c) => parseHostPort(c.apiListen)?.port !== c.port, {
      error: "the management API needs its own port, not the tunnel port",
      path: ["apiListen"],
    })
    .superRefine(samlSettingsComplete)
    .superRefine(passwordHashCostStrongEnough);

export const gatewaySettingsSchema = certAndKeyTogether(z.object(gatewaySettingsShape).strict());
export type GatewaySettings = z.infer<typeof gatewaySettingsSchema>;

/** Everything `gw serve` needs: the settings plus the data directory, validated at once. */
export const gatewayConfigSchema = certAndKeyTogether(
  z.object({ ...shapeOf(RUN_SETTINGS), ...gatewaySettingsShape }).strict(),
);

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function settingsOf(config: GatewayConfig): GatewaySettings {
  const { dataDir: _, ...settings } = config;
  return settingsPruned(settings);
}

function settingsPruned(s: GatewaySettings): GatewaySettings {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as GatewaySettings;
}
