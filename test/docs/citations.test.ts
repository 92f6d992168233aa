import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { findCitations, parseHeadings, unresolved, type Citation } from "./citations.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const SCANNED = ["src", "test", "scripts"];
/** The checker's own sources name the documents as data, not as citations. */
const CHECKER = new Set(["test/docs/citations.ts", "test/docs/citations.test.ts"]);

/** Every text file under the scanned folders, as [repository-relative path, content]. */
function sourceFiles(): [string, string][] {
  const out: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(path);
        continue;
      }
      const rel = relative(repoRoot, path);
      if (!entry.isFile() || CHECKER.has(rel) || statSync(path).size > 4_000_000) continue;
      const text = readFileSync(path, "utf8");
      if (!text.includes("\0")) out.push([rel, text]);
    }
  };
  for (const dir of SCANNED) if (existsSync(join(repoRoot, dir))) walk(join(repoRoot, dir));
  return out;
}

/** Citations of `docName` (any case, with or without a folder) in src/, test/ and scripts/. */
function citationsOf(docName: string): Citation[] {
  return sourceFiles().flatMap(([file, text]) => findCitations(file, text, [docName]));
}

function problemsFor(docName: string, docPath: string): string[] {
  const headings = parseHeadings(readFileSync(join(repoRoot, docPath), "utf8"));
  return unresolved(citationsOf(docName), headings, docPath);
}

describe("every citation of the project's documents resolves", () => {
  test("PROTOCOL.md / docs/protocol.md §X.Y citations name headings of docs/protocol.md", () => {
    expect(existsSync(join(repoRoot, "docs/protocol.md"))).toBe(true);
    // The scan must see the code's citations at all, or an empty list would pass vacuously.
    expect(citationsOf("protocol.md").length).toBeGreaterThan(0);
    expect(problemsFor("protocol.md", "docs/protocol.md")).toEqual([]);
  });

  // docs/architecture.md is written later; until then its citations cannot be checked.
  test.skipIf(!existsSync(join(repoRoot, "docs/architecture.md")))(
    "ARCHITECTURE.md / docs/architecture.md citations name headings of docs/architecture.md",
    () => {
      expect(problemsFor("architecture.md", "docs/architecture.md")).toEqual([]);
    },
  );
});

// The checker itself, on made-up text: a document called GUIDE.md.
const GUIDE = [
  "# Guide",
  "## 2 Login",
  "### 2.3 The init",
  "## 7 DTLS",
  "### 7.3 Resumption",
  "#### Key derivation",
  "### 7.4 PSK",
  "## 9 Checklist",
  "1. first",
  "2. second",
  "3. third",
  "```",
  "## 12 inside a code block, not a heading",
  "```",
].join("\n");

describe("findCitations", () => {
  test("a section, a list of sections, names, items, both spellings of the file", () => {
    const text = [
      "/** Parses the init (GUIDE.md §2.3, §7.4) and keys (docs/guide.md §7.3 \"Key derivation\"). */",
      "// quirks: GUIDE.md §9 items 2–3; see also guide.md section 7.3 and GUIDE.md 2.3.",
      "const x = 1; // GUIDE.md, \"Login\"",
    ].join("\n");
    const found = findCitations("a.ts", text, ["GUIDE.md"]);
    expect(found).toEqual([
      { file: "a.ts", line: 1, doc: "GUIDE.md", section: "2.3" },
      { file: "a.ts", line: 1, doc: "GUIDE.md", section: "7.4" },
      { file: "a.ts", line: 1, doc: "docs/guide.md", section: "7.3", name: "Key derivation" },
      { file: "a.ts", line: 2, doc: "GUIDE.md", section: "9", items: [2, 3] },
      { file: "a.ts", line: 2, doc: "guide.md", section: "7.3" },
      { file: "a.ts", line: 2, doc: "GUIDE.md", section: "2.3" },
      { file: "a.ts", line: 3, doc: "GUIDE.md", name: "Login" },
    ]);
  });

  test("a citation broken over two comment lines is read whole, at the line of the file name", () => {
    const text = ["/**", " * The reader (GUIDE.md \"Two", " * dialects\") and the rest (GUIDE.md §7.3,", " * §7.4).", " */"].join("\n");
    expect(findCitations("b.ts", text, ["GUIDE.md"])).toEqual([
      { file: "b.ts", line: 2, doc: "GUIDE.md", name: "Two dialects" },
      { file: "b.ts", line: 3, doc: "GUIDE.md", section: "7.3" },
      { file: "b.ts", line: 3, doc: "GUIDE.md", section: "7.4" },
    ]);
  });

  test("other files and other section signs are not citations of this one", () => {
    const text = "RFC 8446 §7.5; OTHERGUIDE.md §1; GUIDE.mdx §2; (§4 of nothing)";
    expect(findCitations("c.ts", text, ["GUIDE.md"])).toEqual([]);
  });
});

describe("unresolved", () => {
  const headings = parseHeadings(GUIDE);
  const cite = (c: Omit<Citation, "file" | "line" | "doc">): Citation => ({ file: "src/x.ts", line: 7, doc: "GUIDE.md", ...c });

  test("numbered headings, their sub-headings and list entries resolve; code blocks hold no headings", () => {
    expect(headings.filter((h) => h.number).map((h) => h.number)).toEqual(["2", "2.3", "7", "7.3", "7.4", "9"]);
    const good = [cite({ section: "2" }), cite({ section: "7.3", name: "Key derivation" }), cite({ section: "9", items: [1, 3] }), cite({ name: "PSK" })];
    expect(unresolved(good, headings, "docs/guide.md")).toEqual([]);
  });

  test("each wrong citation is reported with its file and line", () => {
    const bad = [
      cite({ section: "12" }),
      cite({ section: "7.5" }),
      cite({ section: "7.4", name: "Key derivation" }),
      cite({ section: "9", items: [3, 4] }),
      cite({ name: "Two dialects" }),
      cite({}),
    ];
    expect(unresolved(bad, headings, "docs/guide.md")).toEqual([
      "src/x.ts:7: GUIDE.md §12: docs/guide.md has no heading numbered 12",
      "src/x.ts:7: GUIDE.md §7.5: docs/guide.md has no heading numbered 7.5",
      'src/x.ts:7: GUIDE.md §7.4 "Key derivation": section 7.4 of docs/guide.md has no heading titled so',
      "src/x.ts:7: GUIDE.md §9 item 4: section 9 of docs/guide.md has no entry numbered 4",
      'src/x.ts:7: GUIDE.md "Two dialects": docs/guide.md has no heading titled so',
      "src/x.ts:7: GUIDE.md names no section: cite it as §N.M (a numbered heading of docs/guide.md)",
    ]);
  });
});
