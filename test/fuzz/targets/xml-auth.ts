/**
 * Fuzz targets for the login documents: the hardened XML reader and writer (src/front/xml.ts),
 * the login POST body in both dialects (src/front/auth-request.ts: openconnect's config-auth
 * XML and the urlencoded form carrying challenge answers) and the Cookie header (src/front/cookies.ts).
 */
import fc from "fast-check";
import { parseAuthRequest, type AuthRequestLimits } from "../../../src/front/auth-request.ts";
import { parseCookies } from "../../../src/front/cookies.ts";
import { children, parseXmlDocument, text, type XmlElement, type XmlNode, xmlDocument } from "../../../src/front/xml.ts";
import { mutatedBytes, strOf, utf8 } from "./bytes.ts";
import { check, checkTypedError, type FuzzTarget } from "./target.ts";

const XML_CODES = ["xml_malformed", "xml_forbidden_dtd", "xml_too_large"] as const;
const AUTH_CODES = ["auth_bad_request", ...XML_CODES] as const;
const lenientUtf8 = new TextDecoder("utf-8", { fatal: false });

// openconnect 9.01's documents (test/unit/auth-request.test.ts, docs/protocol.md §2.3, §2.5).
export const OPENCONNECT_INIT =
  '<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="init" aggregate-auth-version="2"><version who="vpn">v9.01-3</version><device-id>linux-64</device-id><capabilities><auth-method>single-sign-on-v2</auth-method><auth-method>single-sign-on-external-browser</auth-method></capabilities><group-access>https://vpn.example:24443/</group-access></config-auth>';
export const OPENCONNECT_REPLY =
  '<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="auth-reply" aggregate-auth-version="2"><version who="vpn">v9.01-3</version><device-id>linux-64</device-id><capabilities><auth-method>single-sign-on-v2</auth-method></capabilities><opaque is-for="sg"><tunnel-group>default</tunnel-group><auth-handle>42</auth-handle></opaque><auth><username>alice</username><password> s3cr&amp;t </password></auth><group-select>eng</group-select></config-auth>';
const OTP_REPLY = '<config-auth type="auth-reply"><auth><otp>654321</otp><sso-token>abc</sso-token></auth></config-auth>';
const FORM_BODIES = ["username=alice&password=s3cret&group_list=eng", "otp=123456", "username=b%C3%B6b&password=a+b%26c", "group=staff&username=x"];

const BOMBS = [
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>',
  '<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>',
  '<!DOCTYPE config-auth SYSTEM "http://203.0.113.1/x.dtd"><config-auth type="init"/>',
  '<config-auth type="init"><!ENTITY x "y"></config-auth>',
  '<!doctype html><html/>',
];

/** Inserts a DTD/ENTITY bomb (case varied) somewhere into a document. */
const withBomb = fc
  .tuple(fc.constantFrom(OPENCONNECT_INIT, OPENCONNECT_REPLY, OTP_REPLY), fc.constantFrom(...BOMBS), fc.nat(), fc.boolean())
  .map(([doc, bomb, at, lower]) => {
    const b = lower ? bomb.replace(/DOCTYPE|ENTITY/g, (m) => m.toLowerCase()) : bomb;
    const p = at % (doc.length + 1);
    return doc.slice(0, p) + b + doc.slice(p);
  });

/** `depth` nested elements, optionally inside an auth field or group-select (9362 levels fill the 64 KiB limit). */
export function deepDocument(depth: number, where: "root" | "auth" | "group-select" | "capabilities"): string {
  const inner = `${"<a>".repeat(depth)}x${"</a>".repeat(depth)}`;
  switch (where) {
    case "root":
      return inner;
    case "auth":
      return `<config-auth type="auth-reply"><auth><username>${inner}</username></auth></config-auth>`;
    case "group-select":
      return `<config-auth type="init"><group-select>${inner}</group-select></config-auth>`;
    case "capabilities":
      return `<config-auth type="init"><capabilities><auth-method>${inner}</auth-method></capabilities></config-auth>`;
  }
}
const deep = fc.tuple(fc.integer({ min: 1, max: 9400 }), fc.constantFrom("root", "auth", "group-select", "capabilities") as fc.Arbitrary<Parameters<typeof deepDocument>[1]>).map(([d, w]) => deepDocument(d, w));

const seedDocs = fc.constantFrom(OPENCONNECT_INIT, OPENCONNECT_REPLY, OTP_REPLY).map(utf8);
const mutatedDoc = mutatedBytes(seedDocs, 6);
const hostileText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  { weight: 3, arbitrary: mutatedDoc.map((b) => lenientUtf8.decode(b)) },
  { weight: 1, arbitrary: withBomb },
  { weight: 1, arbitrary: deep },
);

// ---- writer/reader round trip -------------------------------------------------------------

const xmlName = fc.tuple(strOf("ABCXYZabcxyz_", 1, 1), strOf("abcxyzABC019_.-:", 0, 8)).map(([a, b]) => a + b);
// Everything, including characters XML cannot carry (the writer replaces them) and CR.
const anyText = fc.string({ unit: "binary", maxLength: 30 });
const xmlNode: fc.Arbitrary<XmlNode> = fc.letrec<{ node: XmlNode }>((tie) => ({
  node: fc.record({
    name: xmlName,
    attrs: fc.dictionary(xmlName, anyText, { maxKeys: 3 }),
    // Beyond depth 4 only text (oneof falls back to its first choice).
    children: fc.array(fc.oneof({ maxDepth: 4 }, { weight: 2, arbitrary: anyText }, { weight: 1, arbitrary: tie("node") }), { maxLength: 4 }),
  }),
})).node;

const INVALID_XML_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** What a reader sees of a string the writer escaped: invalid characters as U+FFFD, text line ends normalised (XML 1.0 §2.11). */
const asWritten = (s: string) => s.replace(INVALID_XML_CHARS, "\ufffd");
const asReadText = (s: string) => asWritten(s).replace(/\r\n?/g, "\n");

interface Shape {
  name: string;
  attrs: [string, string][];
  text: string;
  children: Shape[];
}
function expectedShape(n: XmlNode): Shape {
  const kids = (n.children ?? []).filter((c): c is XmlNode | string => c !== undefined && c !== false);
  const wantText = (c: XmlNode | string): string => (typeof c === "string" ? asReadText(c) : expectedShape(c).text);
  return {
    name: n.name,
    attrs: Object.entries(n.attrs ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [[k, asWritten(v)] as [string, string]])),
    text: kids.map(wantText).join(""),
    children: kids.filter((c): c is XmlNode => typeof c !== "string").map(expectedShape),
  };
}
function parsedShape(el: XmlElement): Shape {
  return { name: el.name, attrs: Object.entries(el.attributes), text: text(el), children: children(el).map(parsedShape) };
}

// ---- auth request -------------------------------------------------------------------------

const contentType = fc.oneof(
  fc.constantFrom(undefined, "", "application/xml; charset=utf-8", "text/xml", "application/x-www-form-urlencoded", "application/soap+xml", "text/plain", "multipart/form-data; boundary=x"),
  fc.string({ maxLength: 40 }),
);
const authLimits: fc.Arbitrary<AuthRequestLimits> = fc.oneof(
  fc.constant({}),
  fc.record({ maxFields: fc.integer({ min: 0, max: 8 }), maxFieldLength: fc.integer({ min: 0, max: 64 }), maxBodyBytes: fc.integer({ min: 0, max: 4096 }) }),
);
const authBody = fc.oneof(
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  { weight: 3, arbitrary: mutatedDoc },
  { weight: 2, arbitrary: mutatedBytes(fc.constantFrom(...FORM_BODIES).map(utf8), 6) },
  { weight: 1, arbitrary: withBomb.map(utf8) },
  { weight: 1, arbitrary: deep.map(utf8) },
);

function checkAuthResult(ct: string | undefined, body: Uint8Array, limits: AuthRequestLimits): void {
  const r = parseAuthRequest(ct, body, limits);
  if (!r.ok) return checkTypedError(r.error, AUTH_CODES);
  const v = r.value;
  const maxFields = limits.maxFields ?? 64;
  const maxLen = limits.maxFieldLength ?? 4096;
  check(["init", "auth-reply", "form-post", "empty"].includes(v.kind), `kind ${v.kind}`);
  check(v.fields.size <= maxFields, `${v.fields.size} fields over the limit ${maxFields}`);
  for (const [n, val] of v.fields) check(n.length <= maxLen && val.length <= maxLen, `field ${JSON.stringify(n)} over the length limit`);
  check(body.length <= (limits.maxBodyBytes ?? 65536), "a body over the size limit was accepted");
}

/** Field names the auth parser treats as fields (form: not the group selectors). */
const fieldName = fc.string({ unit: "binary", minLength: 1, maxLength: 12 }).filter((n) => n !== "group" && n !== "group_list");
const formFields = fc.uniqueArray(fc.tuple(fieldName, fc.string({ unit: "binary", maxLength: 20 })), { selector: ([n]) => n, maxLength: 6 });
// RFC 6265 §4.1.1: cookie-name is a token, cookie-value has no whitespace, quote, comma, semicolon or backslash.
const cookieToken = strOf("!#$%&'*+-.^_`|~0123456789ABCXYZabcxyz", 1, 10);
const cookieValueChar = fc.constantFrom(..."!#$%&'()*+-./0123456789:<=>?@ABCXYZ[]^_`abcxyz{|}~");
const isWellFormedUtf16 = (s: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

export const xmlTarget: FuzzTarget = {
  name: "xml",
  properties: [
    {
      name: "random, mutated, DTD-bearing and deeply nested documents parse or are refused with a typed error",
      weight: 3,
      testRuns: 300,
      make: () =>
        fc.property(hostileText, (s) => {
          const r = parseXmlDocument(s);
          if (!r.ok) {
            checkTypedError(r.error, XML_CODES);
            return;
          }
          check(!/<!(DOCTYPE|ENTITY)/i.test(s), "a document with a DOCTYPE or ENTITY declaration was accepted");
          check(typeof r.value.name === "string" && r.value.name.length > 0, "root element without a name");
        }),
    },
    {
      name: "a DOCTYPE or ENTITY declaration anywhere is refused as xml_forbidden_dtd",
      testRuns: 100,
      make: () =>
        fc.property(withBomb, (s) => {
          const r = parseXmlDocument(s);
          check(!r.ok && r.error.code === "xml_forbidden_dtd", () => `bomb gave ${r.ok ? "ok" : r.error.code}`);
        }),
    },
    {
      name: "whatever the writer renders, the reader reads back (names, attributes, text)",
      weight: 2,
      testRuns: 300,
      make: () =>
        fc.property(xmlNode, (node) => {
          const doc = xmlDocument(node);
          const r = parseXmlDocument(doc, 1 << 20);
          check(r.ok, () => `rendered document refused: ${!r.ok && r.error.message}\n${doc}`);
          const got = JSON.stringify(parsedShape(r.value));
          const want = JSON.stringify(expectedShape(node));
          check(got === want, () => `read ${got}\nwrote ${want}`);
        }),
    },
  ],
  scaling: [
    { name: "deep nesting", base: 2048, make: (n) => deepDocument(Math.floor(n / 7), "root"), bytes: (s) => s.length, run: (s) => parseXmlDocument(s, 1 << 24) },
    {
      name: "many siblings",
      base: 4096,
      make: (n) => `<config-auth>${"<a b='c'>d</a>".repeat(Math.floor(n / 14))}</config-auth>`,
      bytes: (s) => s.length,
      run: (s) => parseXmlDocument(s, 1 << 24),
    },
    { name: "DTD near the end", base: 4096, make: (n) => `<a>${"x".repeat(n)}<!DOCTYPE a></a>`, bytes: (s) => s.length, run: (s) => parseXmlDocument(s, 1 << 24) },
  ],
};

export const authRequestTarget: FuzzTarget = {
  name: "auth-request",
  properties: [
    {
      name: "any body under any content type parses within the limits or is refused with a typed error",
      weight: 4,
      testRuns: 400,
      make: () => fc.property(contentType, authBody, authLimits, (ct, body, limits) => checkAuthResult(ct, body, limits)),
    },
    {
      name: "urlencoded challenge answers come back as sent",
      weight: 1,
      testRuns: 200,
      make: () =>
        fc.property(formFields, (pairs) => {
          const wellFormed = pairs.filter(([n, v]) => isWellFormedUtf16(n) && isWellFormedUtf16(v));
          const body = new URLSearchParams(wellFormed).toString();
          const r = parseAuthRequest("application/x-www-form-urlencoded", utf8(body));
          check(r.ok, () => `form ${body} refused: ${!r.ok && r.error.message}`);
          const got = JSON.stringify([...r.value.fields]);
          // Leading and trailing whitespace of the whole body is padding (and URLSearchParams escapes it anyway).
          check(got === JSON.stringify(wellFormed), () => `parsed ${got} from ${body}`);
        }),
    },
    {
      name: "config-auth auth-reply fields written by the XML writer come back as sent",
      weight: 1,
      testRuns: 200,
      make: () =>
        fc.property(fc.uniqueArray(fc.tuple(xmlName, fc.string({ unit: "binary", maxLength: 20 })), { selector: ([n]) => n, maxLength: 6 }), fc.option(fc.string({ maxLength: 20 })), (fields, group) => {
          const doc = xmlDocument({
            name: "config-auth",
            attrs: { client: "vpn", type: "auth-reply" },
            children: [{ name: "auth", children: fields.map(([n, v]) => ({ name: n, children: [v] })) }, group !== null && { name: "group-select", children: [group] }],
          });
          const r = parseAuthRequest("application/xml", utf8(doc));
          check(r.ok, () => `auth-reply refused: ${!r.ok && r.error.message}\n${doc}`);
          const got = JSON.stringify([...r.value.fields]);
          const want = JSON.stringify(fields.map(([n, v]) => [n, asReadText(v)]));
          check(got === want, () => `parsed ${got}, wrote ${want}`);
          const wantGroup = group === null ? undefined : asReadText(group).trim() || undefined;
          check(r.value.groupSelect === wantGroup, () => `group ${JSON.stringify(r.value.groupSelect)}, wrote ${JSON.stringify(group)}`);
        }),
    },
    {
      name: "Cookie headers: never throws, names non-empty and trimmed, no ; in names or values",
      weight: 1,
      testRuns: 200,
      make: () =>
        fc.property(fc.option(fc.string({ unit: "binary", maxLength: 200 }), { nil: undefined }), (header) => {
          const cookies = parseCookies(header);
          for (const [n, v] of cookies) {
            check(n.length > 0 && n === n.trim() && !n.includes(";") && !n.includes("="), `cookie name ${JSON.stringify(n)}`);
            check(v === v.trim() && !v.includes(";"), `cookie value ${JSON.stringify(v)}`);
          }
        }),
    },
    {
      name: "Cookie headers a client writes come back pair by pair, the first of a repeated name winning",
      weight: 1,
      testRuns: 200,
      make: () =>
        fc.property(fc.array(fc.tuple(cookieToken, fc.string({ unit: cookieValueChar, maxLength: 20 })), { maxLength: 6 }), (pairs) => {
          const cookies = parseCookies(pairs.map(([n, v]) => `${n}=${v}`).join("; "));
          const want = new Map<string, string>();
          for (const [n, v] of pairs) if (!want.has(n)) want.set(n, v);
          check(JSON.stringify([...cookies]) === JSON.stringify([...want]), () => `parsed ${JSON.stringify([...cookies])} from ${JSON.stringify(pairs)}`);
        }),
    },
  ],
  scaling: [
    {
      name: "many form fields",
      base: 4096,
      make: (n) => utf8(Array.from({ length: Math.floor(n / 12) }, (_, i) => `f${i.toString(36).padStart(4, "0")}=v%41+b`).join("&")),
      bytes: (b) => b.length,
      run: (b) => parseAuthRequest("application/x-www-form-urlencoded", b, { maxFields: 1e9, maxBodyBytes: 1 << 24 }),
    },
    {
      name: "many XML auth fields",
      base: 4096,
      make: (n) => utf8(`<config-auth type="auth-reply"><auth>${Array.from({ length: Math.floor(n / 16) }, (_, i) => `<f${i}>val</f${i}>`).join("")}</auth></config-auth>`),
      bytes: (b) => b.length,
      run: (b) => parseAuthRequest("text/xml", b, { maxFields: 1e9, maxBodyBytes: 1 << 24 }),
    },
    { name: "deep nesting in group-select", base: 2048, make: (n) => utf8(deepDocument(Math.floor(n / 7), "group-select")), bytes: (b) => b.length, run: (b) => parseAuthRequest("text/xml", b, { maxBodyBytes: 1 << 24 }) },
  ],
};
