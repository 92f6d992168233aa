/**
 * Finds citations of a document in source text (`PROTOCOL.md §7.3`, `docs/protocol.md §9
 * items 5–6`, `ARCHITECTURE.md, "Two dialects"`) and checks each against the headings of the
 * markdown file it names. Pure functions: the test walks the folders and reads the files.
 */

/** One citation as written: where it is and what place in the document it names. */
export interface Citation {
  file: string;
  line: number;
  /** The document name as written, e.g. `PROTOCOL.md` or `docs/protocol.md`. */
  doc: string;
  /** Section number (`7.3`), when the citation gives one. */
  section?: string;
  /** A quoted heading title (`"Key derivation"`, `"Two dialects"`), when given. */
  name?: string;
  /** Numbered list entries of the section (`items 5–6`, `rule 3`), when given. */
  items?: number[];
}

/** A heading of the cited markdown: its number (if any), title, and the text up to the next heading of its level or above. */
export interface Heading {
  number?: string;
  title: string;
  body: string;
}

/** Section numbers as headings carry them: `## 2 HTTP login`, `### 5.2 Status line…`, `## 9. Quirks`. */
const NUMBERED_HEADING = /^(#{1,6})\s+(\d+(?:\.\d+)*)\.?\s+(.*)$/;
const ANY_HEADING = /^(#{1,6})\s+(.*)$/;

export function parseHeadings(markdown: string): Heading[] {
  const lines = markdown.split("\n");
  const found: { level: number; number?: string; title: string; start: number }[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) return;
    const numbered = NUMBERED_HEADING.exec(line);
    const any = ANY_HEADING.exec(line);
    if (numbered) found.push({ level: numbered[1]!.length, number: numbered[2], title: numbered[3]!.trim(), start: i });
    else if (any) found.push({ level: any[1]!.length, title: any[2]!.trim(), start: i });
  });
  return found.map((h, k) => {
    const next = found.slice(k + 1).find((later) => later.level <= h.level);
    return { number: h.number, title: h.title, body: lines.slice(h.start + 1, next?.start ?? lines.length).join("\n") };
  });
}

/**
 * Citations of any of `docNames` (matched without regard to case, optionally behind a folder
 * such as `docs/`). Comment leaders are removed and lines joined first, so a citation broken
 * over two comment lines is still read whole; its line is where the document name stands.
 */
export function findCitations(file: string, text: string, docNames: readonly string[]): Citation[] {
  const { flat, lineAt } = flatten(text);
  const names = docNames.map(escapeRegExp).join("|");
  const docPattern = new RegExp(`(?<![\\w-])(?:[\\w.-]+/)*(?:${names})(?![\\w-])`, "gi");
  const citations: Citation[] = [];
  for (const m of flat.matchAll(docPattern)) {
    const line = lineAt(m.index!);
    const doc = m[0];
    let rest = flat.slice(m.index! + doc.length);
    const first = FIRST_SECTION.exec(rest);
    if (!first) {
      const named = NAME_AFTER_DOC.exec(rest);
      citations.push(named ? { file, line, doc, name: named[1]!.trim() } : { file, line, doc });
      continue;
    }
    rest = rest.slice(first[0].length);
    let section = first[1]!;
    for (;;) {
      const cited: Citation = { file, line, doc, section };
      const named = NAME_AFTER_SECTION.exec(rest);
      if (named) {
        cited.name = named[1]!.trim();
        rest = rest.slice(named[0].length);
      }
      const items = ITEMS.exec(rest);
      if (items) {
        cited.items = range(Number(items[1]), Number(items[2] ?? items[1]));
        rest = rest.slice(items[0].length);
      }
      citations.push(cited);
      const more = NEXT_SECTION.exec(rest);
      if (!more) break;
      section = more[1]!;
      rest = rest.slice(more[0].length);
    }
  }
  return citations;
}

// `§7.3`, `section 7.3`, or a bare number right after the name (`PROTOCOL.md 3.1`).
const FIRST_SECTION = /^,?\s*(?:§\s*|section\s+|\s)(\d+(?:\.\d+)*)(?![\w%])/i;
// `, §7.4`, ` and §7.4`, ` & §7.4` after an earlier section of the same citation.
const NEXT_SECTION = /^\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)§\s*(\d+(?:\.\d+)*)(?![\w%])/i;
const QUOTED = `["“]([^"”]{1,80})["”]`;
const NAME_AFTER_DOC = new RegExp(`^,?\\s*${QUOTED}`);
const NAME_AFTER_SECTION = new RegExp(`^\\s+${QUOTED}`);
const ITEMS = /^\s+(?:items?|rules?)\s+(\d+)(?:\s*[–-]\s*(\d+))?/i;

/**
 * What is wrong with each citation, as `file:line: …` lines (empty when all resolve):
 * the section number must be a heading's; a quoted name must be the title of a heading (inside
 * the cited section when there is one); cited items must be numbered entries of the section;
 * a citation that names no place at all is reported too.
 */
export function unresolved(citations: readonly Citation[], headings: readonly Heading[], docPath: string): string[] {
  const problems: string[] = [];
  for (const c of citations) {
    const where = `${c.file}:${c.line}: ${c.doc}`;
    if (c.section === undefined && c.name === undefined) {
      problems.push(`${where} names no section: cite it as §N.M (a numbered heading of ${docPath})`);
      continue;
    }
    const section = c.section === undefined ? undefined : headings.find((h) => h.number === c.section);
    if (c.section !== undefined && !section) {
      problems.push(`${where} §${c.section}: ${docPath} has no heading numbered ${c.section}`);
      continue;
    }
    if (c.name !== undefined && !hasTitle(c.name, section, headings)) {
      const scope = section ? `section ${c.section} of ${docPath}` : docPath;
      problems.push(`${where}${c.section ? ` §${c.section}` : ""} "${c.name}": ${scope} has no heading titled so`);
    }
    for (const item of c.items ?? []) {
      if (!new RegExp(`^\\s*${item}\\.\\s`, "m").test(section!.body)) {
        problems.push(`${where} §${c.section} item ${item}: section ${c.section} of ${docPath} has no entry numbered ${item}`);
      }
    }
  }
  return problems;
}

function hasTitle(name: string, section: Heading | undefined, headings: readonly Heading[]): boolean {
  const wanted = name.toLowerCase();
  const titled = (title: string) => title.toLowerCase() === wanted;
  if (!section) return headings.some((h) => titled(h.title));
  // The section itself, or one of its sub-headings (they are in its body).
  return titled(section.title) || section.body.split("\n").some((l) => ANY_HEADING.test(l) && titled(ANY_HEADING.exec(l)![2]!.trim()));
}

/** Joins the lines of `text` without their comment leaders, and maps offsets back to 1-based lines. */
function flatten(text: string): { flat: string; lineAt(offset: number): number } {
  const starts: number[] = [];
  let flat = "";
  for (const raw of text.split("\n")) {
    starts.push(flat.length);
    flat += raw.replace(/^\s*(?:\/\/+|\*(?!\/)|#+)?\s*/, "").trimEnd() + " ";
  }
  return {
    flat,
    lineAt(offset) {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
      return lo + 1;
    },
  };
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let n = from; n <= Math.max(from, to); n++) out.push(n);
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
