import { appliesText, defaultText } from "./setting-row.ts";
import { SERVE_FLAGS } from "./serve-flags.ts";
import { SETTING_ROWS } from "./settings-table.ts";

/** The command that writes docs/settings.md from the table. */
export const REGENERATE_SETTINGS_DOC = "npm run docs:settings";

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** docs/settings.md: every row of the settings table, for operators. */
export function renderSettingsReference(): string {
  const lines = [
    "# gw settings",
    "",
    `Generated from \`src/config/settings-table.ts\` by \`${REGENERATE_SETTINGS_DOC}\`; do not edit by hand (a unit test checks it is current).`,
    "",
    "The settings document is stored in the data directory: `gw config get` prints it, `gw config set FILE` replaces it",
    "as a whole (`gw config check FILE` is a dry run), `GET`/`PUT /api/v1/config` do the same over the API. `gw serve`",
    "runs with it; a flag given to `gw serve` overrides a setting for that run only. With no document and no flags the",
    "defaults below apply. `gw config keys` prints this table.",
    "",
    "When a change applies: *restart required* means it is stored and listed in `restartRequired`, and takes effect at",
    "the next start; *live* settings apply at once to new tunnels or new logins (a live session keeps what it got).",
    "",
    "| setting | `gw serve` flag | default | applies | what it is |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const row of SETTING_ROWS) {
    const flag = SERVE_FLAGS.find((f) => f.key === row.key);
    const flagText = flag
      ? flag.kind === "boolean"
        ? flag.defaultOn
          ? `\`--no-${flag.name}\``
          : `\`--${flag.name}\``
        : `\`--${flag.name} ${flag.valueHint}\``
      : `none: ${row.flag === false ? row.noFlagReason : ""}`;
    const key = row.inDocument ? `\`${row.key}\`` : `(not stored) ${row.key}`;
    const env = row.env ? `; or \`${row.env}\`` : "";
    const unit = row.unit ? ` (${row.unit})` : "";
    const extra = [
      row.needs?.length ? `Goes with ${row.needs.map((k) => `\`${k}\``).join(", ")}.` : "",
      row.alsoDrops?.length && flag ? `The flag replaces a stored ${row.alsoDrops.map((k) => `\`${k}\``).join(", ")} too.` : "",
      row.example ? `Example: \`${row.example}\`.` : "",
    ].filter(Boolean);
    const what = `${row.help}${unit}.${extra.length ? ` ${extra.join(" ")}` : ""}`;
    lines.push(`| ${cell(key)} | ${cell(flagText + env)} | ${cell(defaultText(row))} | ${appliesText(row.applies)} | ${cell(what)} |`);
  }
  lines.push("");
  return lines.join("\n");
}

/** One setting as `gw config keys` shows it (and prints with --json). */
export interface SettingEntry {
  key: string;
  /** false: not in the settings document (the data directory). */
  stored: boolean;
  flag: string | null;
  env: string | null;
  default: string;
  unit: string | null;
  applies: string;
  help: string;
}

export function settingEntries(): SettingEntry[] {
  return SETTING_ROWS.map((row) => {
    const flag = SERVE_FLAGS.find((f) => f.key === row.key);
    return {
      key: row.key,
      stored: row.inDocument,
      flag: flag ? (flag.defaultOn ? `--no-${flag.name}` : `--${flag.name}`) : null,
      env: row.env ?? null,
      default: defaultText(row),
      unit: row.unit ?? null,
      applies: appliesText(row.applies),
      help: row.help,
    };
  });
}
