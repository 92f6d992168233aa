import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** WCAG 2 contrast of the UI's colour pairs, in the light and the dark theme (AA: 4.5 for text, 3 for borders). */
const css = readFileSync(join(import.meta.dirname, "../../../src/ui/assets/ui.css"), "utf8");

function theme(block: string): Record<string, string> {
  return Object.fromEntries([...block.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1]!, m[2]!]));
}
const light = theme(/:root\s*{([^}]*)}/.exec(css)![1]!);
const dark = { ...light, ...theme(/prefers-color-scheme: dark\)\s*{\s*:root\s*{([^}]*)}/.exec(css)![1]!) };

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** [foreground, background] of every text the pages draw. */
const TEXT_PAIRS = [
  ["text", "bg"],
  ["text", "panel"],
  ["muted", "bg"],
  ["muted", "panel"],
  ["accent", "panel"],
  ["accent", "bg"],
  ["accent-text", "accent"],
  ["bg", "danger"],
  ["danger", "panel"],
  ["danger", "bg"],
  ["warn-text", "warn-bg"],
  ["ok", "panel"],
];

describe("colour contrast", () => {
  for (const [name, vars] of [["light", light], ["dark", dark]] as const) {
    test(`${name} theme: every text pair reaches 4.5:1`, () => {
      for (const [fg, bg] of TEXT_PAIRS) {
        expect(vars[fg!], `--${fg}`).toBeString();
        expect(contrast(vars[fg!]!, vars[bg!]!), `${name}: --${fg} on --${bg}`).toBeGreaterThanOrEqual(4.5);
      }
      // The focus ring against the page: 3:1 for non-text.
      expect(contrast(vars.focus!, vars.bg!)).toBeGreaterThanOrEqual(3);
    });
  }
});
