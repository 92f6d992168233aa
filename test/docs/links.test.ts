/**
 * Every relative link in the README and docs/ resolves: the file exists and, for `file.md#anchor`,
 * the anchor is one of that file's headings (GitHub's slugs). Moving a section breaks this loudly.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const documents = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");

const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));

function brokenLinks(document: string, content = readFileSync(join(repoRoot, document), "utf8")): string[] {
  const text = content.replace(/```[\s\S]*?```/g, "");
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target!)) continue; // https:, mailto:
    const [path, anchor] = target!.split("#") as [string, string | undefined];
    const file = path ? normalize(join(dirname(document), path)) : document;
    if (!existsSync(join(repoRoot, file))) broken.push(`${document}: ${target} (no file ${relative(".", file)})`);
    else if (anchor && file.endsWith(".md") && !anchorsOf(readFileSync(join(repoRoot, file), "utf8")).has(anchor)) broken.push(`${document}: ${target} (no heading #${anchor} in ${file})`);
  }
  return broken;
}

test("every relative link in the README and docs/ resolves to a file and heading", () => {
  expect(documents).toContain("docs/cli.md");
  expect(documents.flatMap((d) => brokenLinks(d))).toEqual([]);
});

test("the checker catches a link to a missing file or heading", () => {
  expect(slug("One-time codes (password+otp)")).toBe("one-time-codes-passwordotp");
  expect(anchorsOf("# A\n## Login methods and brute-force protection\n").has("login-methods-and-brute-force-protection")).toBe(true);
  const fake = "[a](cli.md) [b](no-such.md) [c](login.md#no-such-heading) [d](login.md#one-time-codes-passwordotp) [e](https://example.org/x)";
  expect(brokenLinks("docs/fake.md", fake)).toEqual([
    "docs/fake.md: no-such.md (no file docs/no-such.md)",
    "docs/fake.md: login.md#no-such-heading (no heading #no-such-heading in docs/login.md)",
  ]);
});
