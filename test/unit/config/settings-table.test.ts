import { describe, expect, test } from "bun:test";
import { gatewaySettingsSchema, gatewaySettingsShape } from "../../../src/config/gateway-config.ts";
import { defaultOf, valueKind } from "../../../src/config/setting-row.ts";
import { SETTING_ROWS, SETTINGS } from "../../../src/config/settings-table.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { AuditLog } from "../../../src/control/audit.ts";
import { EventBus } from "../../../src/control/events.ts";
import { SettingsService } from "../../../src/control/settings.ts";
import { documentRows, exampleChange, exampleValue } from "./setting-examples.ts";

describe("the settings table", () => {
  test("every setting has a gw serve flag or a documented reason not to", () => {
    for (const row of SETTING_ROWS) {
      if (row.flag === false) expect({ key: row.key, reason: row.noFlagReason.trim().length > 10 }).toEqual({ key: row.key, reason: true });
      else expect({ key: row.key, flag: /^[a-z][a-z0-9-]*$/.test(row.flag) }).toEqual({ key: row.key, flag: true });
    }
    const names = SETTING_ROWS.flatMap((r) => (r.flag === false ? [] : [r.flag]));
    expect(new Set(names).size).toBe(names.length);
  });

  test("every setting has a default or says what its absence means, and a help line", () => {
    for (const row of SETTING_ROWS) {
      expect({ key: row.key, documented: defaultOf(row) !== undefined || (row.whenAbsent ?? "").length > 0 }).toEqual({ key: row.key, documented: true });
      expect(row.help.length).toBeGreaterThan(5);
    }
  });

  test("every example is a valid value that differs from the default", () => {
    for (const row of SETTING_ROWS) {
      if (valueKind(row.schema) !== "boolean") expect({ key: row.key, example: row.example !== undefined }).toEqual({ key: row.key, example: true });
      const value = exampleValue(row);
      expect({ key: row.key, valid: row.schema.safeParse(value).success, differs: value !== defaultOf(row) }).toEqual({ key: row.key, valid: true, differs: true });
    }
  });

  test("the settings document is exactly the table's document rows, in order", () => {
    expect(Object.keys(gatewaySettingsShape)).toEqual(documentRows.map((r) => r.key));
    expect(Object.keys(SETTINGS)).toEqual(documentRows.map((r) => r.key));
    expect(() => gatewaySettingsSchema.parse({ dataDir: "/tmp" })).toThrow();
  });

  test("a running gateway reports a change as restart-required exactly for the rows that say so", () => {
    const store = openSqliteStore(":memory:");
    if (!store.ok) throw store.error;
    const current = gatewaySettingsSchema.parse({});
    const service = new SettingsService(store.value, new AuditLog(store.value, Date.now), new EventBus(Date.now), {
      current: () => current,
      flagged: [],
      applyLive: () => {},
    });
    for (const row of documentRows) {
      const change = exampleChange(row.key);
      const verdict = service.check(change);
      expect({ key: row.key, valid: verdict.valid }).toEqual({ key: row.key, valid: true });
      const expected = Object.keys(change).filter((k) => SETTINGS[k as keyof typeof SETTINGS].applies === "restart").sort();
      expect({ key: row.key, restartRequired: [...verdict.restartRequired].sort() }).toEqual({ key: row.key, restartRequired: expected });
    }
    store.value.close();
  });

  test("live rows reach applyLive on a replace; restart rows do not", () => {
    const store = openSqliteStore(":memory:");
    if (!store.ok) throw store.error;
    const current = gatewaySettingsSchema.parse({});
    let applied: Record<string, unknown> = {};
    const service = new SettingsService(store.value, new AuditLog(store.value, Date.now), new EventBus(Date.now), {
      current: () => current,
      flagged: [],
      applyLive: (s) => (applied = s),
    });
    for (const row of documentRows) {
      const change = exampleChange(row.key);
      const r = service.replace(change, "test");
      expect(r.ok).toBe(true);
      // Compared as JSON: an object setting (groupDefaults) arrives parsed, equal but not identical.
      const reached = applied[row.key] !== undefined && JSON.stringify(applied[row.key]) === JSON.stringify(change[row.key]);
      expect({ key: row.key, reached }).toEqual({ key: row.key, reached: row.applies !== "restart" });
    }
    store.value.close();
  });
});
