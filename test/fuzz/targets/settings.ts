/**
 * Fuzz target for the settings document: the zod schema of src/config/gateway-config.ts and the
 * validation path of src/control/settings.ts (check / replace), plus HOST:PORT parsing.
 */
import fc from "fast-check";
import { gatewayConfigSchema, gatewaySettingsSchema, gatewaySettingsShape, parseHostPort } from "../../../src/config/gateway-config.ts";
import { readStoredSettings, SETTINGS_META_KEY, storedSettingsDocument } from "../../../src/control/settings.ts";
import { issueDetails } from "../../../src/control/zod-errors.ts";
import { apiFixture } from "../../unit/api/fixture.ts";
import { plausibleValue, shapedObject } from "./values.ts";
import { check, checkTypedError, type FuzzTarget } from "./target.ts";

const SETTING_KEYS = Object.keys(gatewaySettingsShape);
const settingsDocument = fc.oneof({ weight: 4, arbitrary: shapedObject(SETTING_KEYS) }, { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) }, { weight: 1, arbitrary: plausibleValue });

function checkProblems(issues: Parameters<typeof issueDetails>[0]): void {
  const details = issueDetails(issues);
  check(details.length > 0, "a refusal without problems");
  for (const d of details) check(typeof d.path === "string" && typeof d.message === "string" && d.message.length > 0, `problem ${JSON.stringify(d)}`);
}

export const settingsTarget: FuzzTarget = {
  name: "settings",
  properties: [
    {
      name: "the schema accepts a document or lists its problems; an accepted one is a fixed point through JSON",
      weight: 2,
      testRuns: 400,
      make: () =>
        fc.property(settingsDocument, (doc) => {
          const r = gatewaySettingsSchema.safeParse(doc);
          if (!r.success) return checkProblems(r.error.issues);
          const again = gatewaySettingsSchema.safeParse(JSON.parse(JSON.stringify(r.data)));
          check(again.success, () => `stored settings no longer validate: ${JSON.stringify(r.data)}`);
          check(JSON.stringify(again.data) === JSON.stringify(r.data), "settings change when stored and read back");
          const config = gatewayConfigSchema.safeParse({ ...r.data, dataDir: "/var/lib/gw" });
          check(config.success, "valid settings plus a data directory are not a valid config");
        }),
    },
    {
      name: "check and replace agree with the schema; a refused document leaves the stored one as it was",
      weight: 2,
      testRuns: 200,
      make: () => {
        const f = apiFixture();
        return fc.property(settingsDocument, (doc) => {
          const valid = gatewaySettingsSchema.safeParse(doc).success;
          const verdict = f.control.settings.check(doc);
          check(verdict.valid === valid, `check says valid=${verdict.valid}, the schema ${valid}`);
          if (!valid) check(verdict.problems.length > 0, "an invalid verdict without problems");
          const before = f.control.store.getMeta(SETTINGS_META_KEY);
          const r = f.control.settings.replace(doc, "fuzz");
          check(r.ok === valid, `replace ok=${r.ok}, the schema ${valid}`);
          if (!r.ok) {
            checkTypedError(r.error, "invalid_input");
            check(f.control.store.getMeta(SETTINGS_META_KEY) === before, "a refused document changed the stored settings");
          } else check(JSON.stringify(f.control.settings.get()) === JSON.stringify(r.value.config), "stored settings differ from the accepted ones");
        });
      },
    },
    {
      name: "a stored document that is garbage reads as valid settings (defaults) or a typed store_corrupt, never a throw",
      testRuns: 200,
      make: () => {
        const f = apiFixture();
        return fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 60 }), settingsDocument.map((d) => JSON.stringify(d) ?? "")), (stored) => {
          f.control.store.setMeta(SETTINGS_META_KEY, stored);
          const read = readStoredSettings(f.control.store);
          check(gatewaySettingsSchema.safeParse(read).success, () => `stored ${JSON.stringify(stored)} read as invalid settings`);
          const doc = storedSettingsDocument(f.control.store);
          if (!doc.ok) checkTypedError(doc.error, "store_corrupt");
        });
      },
    },
    {
      name: "HOST:PORT parsing: a port in 1..65535 and an IP host, or nothing; never throws",
      testRuns: 200,
      make: () =>
        fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.tuple(fc.ipV4(), fc.integer({ min: -1, max: 70000 })).map(([h, p]) => `${h}:${p}`)), (text) => {
          const r = parseHostPort(text);
          if (!r) return;
          check(Number.isInteger(r.port) && r.port >= 1 && r.port <= 65535, `port ${r.port} from ${JSON.stringify(text)}`);
          check(r.host.length > 0 && !/\s/.test(r.host), `host ${JSON.stringify(r.host)}`);
        }),
    },
  ],
  scaling: [
    {
      name: "document with long strings",
      base: 4096,
      make: (n) => ({ listen: "1".repeat(n / 4), apiListen: "2".repeat(n / 4), tunName: "g".repeat(n / 4), pool: "3".repeat(n / 4) }),
      bytes: (d) => JSON.stringify(d).length,
      run: (d) => gatewaySettingsSchema.safeParse(d),
    },
  ],
};
