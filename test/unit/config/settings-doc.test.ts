import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REGENERATE_SETTINGS_DOC, renderSettingsReference, settingEntries } from "../../../src/config/settings-reference.ts";
import { SETTING_ROWS } from "../../../src/config/settings-table.ts";

const DOC = join(import.meta.dir, "../../../docs/settings.md");

describe("docs/settings.md", () => {
  test("matches the settings table", () => {
    const current = readFileSync(DOC, "utf8") === renderSettingsReference();
    if (!current) throw new Error(`docs/settings.md is out of date with src/config/settings-table.ts: run \`${REGENERATE_SETTINGS_DOC}\` and commit the result`);
    expect(current).toBe(true);
  });

  test("names every setting, its flag and its default", () => {
    const doc = renderSettingsReference();
    for (const entry of settingEntries()) {
      const line = doc.split("\n").find((l) => l.startsWith(`| \`${entry.key}\``) || l.startsWith(`| (not stored) ${entry.key} `));
      expect({ key: entry.key, listed: line !== undefined }).toEqual({ key: entry.key, listed: true });
      if (entry.flag) expect(line).toContain(entry.flag);
      expect(line).toContain(entry.default.replace(/\|/g, "\\|"));
    }
    expect(settingEntries().length).toBe(SETTING_ROWS.length);
  });
});
