/**
 * The small XML surface the auth exchange needs (docs/protocol.md §2): a hardened reader on
 * @rgrove/parse-xml, a four-function element API, and an always-escaping writer.
 */
import { parseXml, XmlElement, XmlError } from "@rgrove/parse-xml";
import { err, ok, type Result } from "../errors.ts";

export type { XmlElement };

/**
 * Parses a whole document and returns its root element.
 * Error codes:
 * - xml_too_large: more than maxBytes UTF-8 bytes
 * - xml_forbidden_dtd: a DOCTYPE or ENTITY declaration anywhere in the text (billion laughs,
 *   external entities). Checked on the raw text, so even one inside a comment or CDATA is
 *   refused: no real client sends either.
 * - xml_malformed: not well-formed; the message gives line and column
 */
export function parseXmlDocument(text: string, maxBytes = 65536): Result<XmlElement> {
  // UTF-8 takes at least one byte per UTF-16 unit and at most three.
  if (text.length > maxBytes || (text.length * 3 > maxBytes && utf8Length(text) > maxBytes)) {
    return err("xml_too_large", `XML document exceeds the ${maxBytes}-byte limit`);
  }
  if (/<!(DOCTYPE|ENTITY)/i.test(text)) {
    return err("xml_forbidden_dtd", "XML document contains a DOCTYPE or ENTITY declaration, which is refused");
  }
  try {
    const root = parseXml(text).root;
    if (!root) return err("xml_malformed", "XML document has no root element");
    return ok(root);
  } catch (e) {
    if (e instanceof XmlError) {
      // First line only: it reads "<problem> (line L, column C)"; the excerpt may hold secrets.
      return err("xml_malformed", `malformed XML: ${e.message.split("\n")[0]}`, { line: e.line, column: e.column });
    }
    return err("xml_malformed", `malformed XML: ${(e as Error).message}`);
  }
}

function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** First child element named `name` (names are case-sensitive, docs/protocol.md §2.4). */
export function child(el: XmlElement, name: string): XmlElement | undefined {
  for (const c of el.children) if (c instanceof XmlElement && c.name === name) return c;
  return undefined;
}

/** Child elements named `name`, or all child elements when `name` is omitted. */
export function children(el: XmlElement, name?: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of el.children) if (c instanceof XmlElement && (name === undefined || c.name === name)) out.push(c);
  return out;
}

/** Text content of the element and its descendants (CDATA included), not trimmed. */
export function text(el: XmlElement): string {
  return el.text;
}

export function attr(el: XmlElement, name: string): string | undefined {
  return Object.hasOwn(el.attributes, name) ? el.attributes[name] : undefined;
}

// ---- writer -------------------------------------------------------------------------------

/** An element to render. Falsy children are skipped, which keeps optional parts inline. */
export interface XmlNode {
  name: string;
  attrs?: Record<string, string | undefined>;
  children?: (XmlNode | string | undefined | false)[];
}

// Characters XML 1.0 cannot carry at all (controls, lone surrogates, U+FFFE/U+FFFF) become
// U+FFFD so a stray byte in, say, a banner cannot make the client reject the document.
const INVALID_XML_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function escapeXmlText(s: string): string {
  return s.replace(INVALID_XML_CHARS, "\ufffd").replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

const ATTR_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  // Whitespace as references survives attribute-value normalisation.
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};

export function escapeXmlAttr(s: string): string {
  return s.replace(INVALID_XML_CHARS, "\ufffd").replace(/[&<>"'\t\n\r]/g, (c) => ATTR_ESCAPES[c]!);
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;

/** Renders an element tree on one line. Element/attribute names are ours: bad ones throw. */
export function renderXml(node: XmlNode): string {
  if (!NAME.test(node.name)) throw new TypeError(`invalid XML element name ${JSON.stringify(node.name)}`);
  let out = `<${node.name}`;
  for (const [k, v] of Object.entries(node.attrs ?? {})) {
    if (v === undefined) continue;
    if (!NAME.test(k)) throw new TypeError(`invalid XML attribute name ${JSON.stringify(k)}`);
    out += ` ${k}="${escapeXmlAttr(v)}"`;
  }
  const kids = (node.children ?? []).filter((c): c is XmlNode | string => c !== undefined && c !== false);
  if (kids.length === 0) return `${out}/>`;
  out += ">";
  for (const c of kids) out += typeof c === "string" ? escapeXmlText(c) : renderXml(c);
  return `${out}</${node.name}>`;
}

/** A complete document: XML declaration, newline, the element. */
export function xmlDocument(node: XmlNode): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${renderXml(node)}`;
}
