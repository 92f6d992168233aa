/**
 * Reads the body of a request to the auth endpoint, in either dialect (docs/architecture.md §2 "Two
 * dialects"): the real clients' XML `<config-auth>` (docs/protocol.md §2.3, §2.5) or an urlencoded
 * form (the legacy fallback, §2.9, and the spec's literal `username`/`password`/`group`).
 */
import { err, ok, type Result } from "../errors.ts";
import { attr, child, children, parseXmlDocument, text, type XmlElement } from "./xml.ts";

export interface AuthRequest {
  dialect: "xml" | "form";
  /** XML: the root's `type`. Form: "form-post". Either dialect with no body: "empty". */
  kind: "init" | "auth-reply" | "form-post" | "empty";
  /** XML: children of `<auth>` by element name. Form: every pair except the group. */
  fields: Map<string, string>;
  /** XML: top-level `<group-select>`. Form: `group_list` (docs/protocol.md §2.5) or `group` (spec). */
  groupSelect?: string;
  /** XML: the `<opaque>` element echoed back by the client (§2.4), as parsed. */
  opaque?: XmlElement;
  deviceId?: string;
  /** XML: `<version who="vpn">`, e.g. "v9.01-3". */
  clientVersion?: string;
  /** XML: `<capabilities><auth-method>` values, e.g. "single-sign-on-v2". */
  capabilities: string[];
}

export interface AuthRequestLimits {
  /** Default 64. */
  maxFields?: number;
  /** Longest field name or value, in characters. Default 4096. */
  maxFieldLength?: number;
  /** Largest body, in bytes. Default 65536. */
  maxBodyBytes?: number;
}

/**
 * Error codes: auth_bad_request (wrong shape, encoding, content type or limits), and for XML
 * bodies the codes of parseXmlDocument (xml_malformed, xml_forbidden_dtd, xml_too_large).
 */
export function parseAuthRequest(
  contentType: string | undefined,
  body: Uint8Array,
  limits: AuthRequestLimits = {},
): Result<AuthRequest> {
  const lim = { maxFields: limits.maxFields ?? 64, maxFieldLength: limits.maxFieldLength ?? 4096 };
  const maxBody = limits.maxBodyBytes ?? 65536;
  if (body.length > maxBody) return bad(`body exceeds the ${maxBody}-byte limit`);

  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const xmlType = mediaType === "application/xml" || mediaType === "text/xml" || mediaType.endsWith("+xml");
  const formType = mediaType === "application/x-www-form-urlencoded";

  // Clients pad the request with the X-Pad header, not the body (§2.2), but tolerate trailing
  // whitespace or NUL padding on the body anyway.
  let len = body.length;
  while (len > 0 && isPad(body[len - 1]!)) len--;
  let first = 0;
  while (first < len && isWhitespace(body[first]!)) first++;

  if (first === len) {
    if (!xmlType && !formType && mediaType !== "") return bad(`unsupported content type ${JSON.stringify(mediaType)}`);
    return ok({ dialect: xmlType ? "xml" : "form", kind: "empty", fields: new Map(), capabilities: [] });
  }
  // A UTF-8 BOM also marks XML.
  const looksXml = body[first] === 0x3c || (body[first] === 0xef && body[first + 1] === 0xbb && body[first + 2] === 0xbf);
  if (xmlType || looksXml) return parseXmlBody(body.subarray(first, len), maxBody, lim);
  if (formType || mediaType === "") return parseFormBody(body.subarray(first, len), lim);
  return bad(`unsupported content type ${JSON.stringify(mediaType)}; send XML or application/x-www-form-urlencoded`);
}

type Limits = { maxFields: number; maxFieldLength: number };

const bad = (message: string): Result<never> => err("auth_bad_request", message);
const isWhitespace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const isPad = (b: number) => b === 0 || isWhitespace(b);
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function checkField(name: string, value: string, count: number, lim: Limits): Result<never> | undefined {
  if (count >= lim.maxFields) return bad(`more than ${lim.maxFields} fields`);
  if (name.length > lim.maxFieldLength) return bad(`a field name is longer than ${lim.maxFieldLength} characters`);
  if (value.length > lim.maxFieldLength) return bad(`field ${JSON.stringify(name.slice(0, 64))} is longer than ${lim.maxFieldLength} characters`);
  return undefined;
}

function parseXmlBody(bytes: Uint8Array, maxBody: number, lim: Limits): Result<AuthRequest> {
  const textBody = decodeUtf8(bytes);
  if (textBody === undefined) return bad("XML body is not valid UTF-8");
  const parsed = parseXmlDocument(textBody, maxBody);
  if (!parsed.ok) return parsed;
  const root = parsed.value;
  // openconnect accepts a bare <auth> root from servers, but clients always post <config-auth>.
  if (root.name !== "config-auth") return bad(`expected a <config-auth> document, got <${root.name.slice(0, 64)}>`);
  const type = attr(root, "type");
  if (type !== "init" && type !== "auth-reply") {
    return bad(`<config-auth type=${JSON.stringify(type ?? "")}> is not a client request (expected "init" or "auth-reply")`);
  }

  const fields = new Map<string, string>();
  const auths = children(root, "auth");
  if (auths.length > 1) return bad("more than one <auth> element");
  for (const f of auths.length ? children(auths[0]!) : []) {
    if (children(f).length > 0) return bad(`<auth> field <${f.name.slice(0, 64)}> must hold text only`);
    const value = text(f);
    const problem = checkField(f.name, value, fields.size, lim);
    if (problem) return problem;
    if (fields.has(f.name)) return bad(`field <${f.name.slice(0, 64)}> appears twice`);
    fields.set(f.name, value);
  }

  const version = children(root, "version").find((v) => (attr(v, "who") ?? "vpn") === "vpn");
  const caps = child(root, "capabilities");
  const capabilities = caps ? children(caps, "auth-method").map((m) => text(m).trim()).filter((m) => m !== "") : [];
  const req: AuthRequest = { dialect: "xml", kind: type, fields, capabilities };
  const group = optionalText(child(root, "group-select"));
  if (group !== undefined) req.groupSelect = group;
  const opaque = child(root, "opaque");
  if (opaque) req.opaque = opaque;
  const deviceId = optionalText(child(root, "device-id"));
  if (deviceId !== undefined) req.deviceId = deviceId;
  const clientVersion = optionalText(version);
  if (clientVersion !== undefined) req.clientVersion = clientVersion;
  return ok(req);
}

function optionalText(el: XmlElement | undefined): string | undefined {
  const t = el ? text(el).trim() : "";
  return t === "" ? undefined : t;
}

/** application/x-www-form-urlencoded: `+` is a space, `%XX` a byte, the bytes UTF-8. */
function parseFormBody(bytes: Uint8Array, lim: Limits): Result<AuthRequest> {
  const fields = new Map<string, string>();
  let pairStart = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x26 /* & */) continue;
    const pair = bytes.subarray(pairStart, i);
    pairStart = i + 1;
    if (pair.length === 0) continue;
    const eq = pair.indexOf(0x3d /* = */);
    const name = formDecode(eq < 0 ? pair : pair.subarray(0, eq));
    const value = eq < 0 ? "" : formDecode(pair.subarray(eq + 1));
    if (name === undefined || value === undefined) return bad("form body has a bad %-escape or is not UTF-8");
    if (name === "") return bad("form body has a field without a name");
    const problem = checkField(name, value, fields.size, lim);
    if (problem) return problem;
    if (fields.has(name)) return bad(`form field ${JSON.stringify(name.slice(0, 64))} appears twice`);
    fields.set(name, value);
  }
  const req: AuthRequest = { dialect: "form", kind: "form-post", fields, capabilities: [] };
  const groupList = fields.get("group_list");
  const group = fields.get("group");
  if (groupList !== undefined && group !== undefined && groupList !== group) {
    return bad("form fields group_list and group disagree");
  }
  fields.delete("group_list");
  fields.delete("group");
  const chosen = (groupList ?? group)?.trim();
  if (chosen) req.groupSelect = chosen;
  return ok(req);
}

function formDecode(raw: Uint8Array): string | undefined {
  if (!raw.includes(0x25) && !raw.includes(0x2b)) return decodeUtf8(raw);
  const out = new Uint8Array(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === 0x2b) out[n++] = 0x20;
    else if (b === 0x25) {
      const hi = hexValue(raw[i + 1]);
      const lo = hexValue(raw[i + 2]);
      if (hi < 0 || lo < 0) return undefined;
      out[n++] = (hi << 4) | lo;
      i += 2;
    } else out[n++] = b;
  }
  return decodeUtf8(out.subarray(0, n));
}

function hexValue(b: number | undefined): number {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}
