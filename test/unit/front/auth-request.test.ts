import { describe, expect, test } from "bun:test";
import { parseAuthRequest } from "../../../src/front/auth-request.ts";
import { attr, child, text } from "../../../src/front/xml.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const XML_CT = "application/xml; charset=utf-8";
const FORM_CT = "application/x-www-form-urlencoded";

// openconnect 9.01 sends these on one line (docs/protocol.md §2.3, §2.5).
const INIT =
  '<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="init" aggregate-auth-version="2"><version who="vpn">v9.01-3</version><device-id>linux-64</device-id><capabilities><auth-method>single-sign-on-v2</auth-method><auth-method>single-sign-on-external-browser</auth-method></capabilities><group-access>https://vpn.example:24443/</group-access></config-auth>';
const REPLY =
  '<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="auth-reply" aggregate-auth-version="2"><version who="vpn">v9.01-3</version><device-id>linux-64</device-id><capabilities><auth-method>single-sign-on-v2</auth-method></capabilities><opaque is-for="sg"><tunnel-group>default</tunnel-group><auth-handle>42</auth-handle></opaque><auth><username>alice</username><password> s3cr&amp;t </password></auth><group-select>eng</group-select></config-auth>';

function parse(ct: string | undefined, body: string | Uint8Array) {
  const r = parseAuthRequest(ct, typeof body === "string" ? enc(body) : body);
  if (!r.ok) throw r.error;
  return r.value;
}
function code(ct: string | undefined, body: string, limits?: Parameters<typeof parseAuthRequest>[2]) {
  const r = parseAuthRequest(ct, enc(body), limits);
  return r.ok ? "ok" : r.error.code;
}

describe("parseAuthRequest: XML", () => {
  test("init", () => {
    const r = parse(XML_CT, INIT);
    expect(r.dialect).toBe("xml");
    expect(r.kind).toBe("init");
    expect(r.fields.size).toBe(0);
    expect(r.deviceId).toBe("linux-64");
    expect(r.clientVersion).toBe("v9.01-3");
    expect(r.capabilities).toEqual(["single-sign-on-v2", "single-sign-on-external-browser"]);
    expect(r.groupSelect).toBeUndefined();
    expect(r.opaque).toBeUndefined();
  });
  test("second init with group-select (§2.6)", () => {
    const r = parse(XML_CT, INIT.replace("</config-auth>", "<group-select> engineering </group-select></config-auth>"));
    expect(r.kind).toBe("init");
    expect(r.groupSelect).toBe("engineering");
  });
  test("auth-reply: fields, opaque, group, values untrimmed", () => {
    const r = parse(XML_CT, REPLY);
    expect(r.kind).toBe("auth-reply");
    expect([...r.fields]).toEqual([
      ["username", "alice"],
      ["password", " s3cr&t "],
    ]);
    expect(r.groupSelect).toBe("eng");
    expect(r.opaque!.name).toBe("opaque");
    expect(attr(r.opaque!, "is-for")).toBe("sg");
    expect(text(child(r.opaque!, "auth-handle")!)).toBe("42");
  });
  test("OTP and SSO token fields", () => {
    const r = parse(XML_CT, '<config-auth type="auth-reply"><auth><otp>654321</otp><sso-token>abc</sso-token></auth></config-auth>');
    expect(r.fields.get("otp")).toBe("654321");
    expect(r.fields.get("sso-token")).toBe("abc");
    expect(r.capabilities).toEqual([]);
    expect(r.clientVersion).toBeUndefined();
  });
  test("empty field value", () => {
    expect(parse(XML_CT, '<config-auth type="auth-reply"><auth><password/></auth></config-auth>').fields.get("password")).toBe("");
  });
  test("detected from the body without a content type, or with a wrong one", () => {
    expect(parse(undefined, `  \r\n${INIT}`).dialect).toBe("xml");
    expect(parse("text/plain", INIT).kind).toBe("init");
    expect(parse(FORM_CT, INIT).dialect).toBe("xml");
    expect(parse("text/xml", INIT).dialect).toBe("xml");
  });
  test("UTF-8 BOM and trailing whitespace / NUL padding are tolerated", () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc(INIT), 0x0a, 0x20, 0, 0]);
    expect(parse(XML_CT, bom).kind).toBe("init");
  });
  test("UTF-8 in fields", () => {
    expect(parse(XML_CT, '<config-auth type="auth-reply"><auth><username>zoë</username></auth></config-auth>').fields.get("username")).toBe("zoë");
  });
  test("version: who=vpn preferred over others", () => {
    const r = parse(XML_CT, '<config-auth type="init"><version who="sg">0.1</version><version who="vpn">v9</version></config-auth>');
    expect(r.clientVersion).toBe("v9");
  });
  test("rejections", () => {
    expect(code(XML_CT, '<auth><username>a</username></auth>')).toBe("auth_bad_request");
    expect(code(XML_CT, '<config-auth type="auth-request"/>')).toBe("auth_bad_request");
    expect(code(XML_CT, "<config-auth/>")).toBe("auth_bad_request");
    expect(code(XML_CT, '<config-auth type="auth-reply"><auth/><auth/></config-auth>')).toBe("auth_bad_request");
    expect(code(XML_CT, '<config-auth type="auth-reply"><auth><a>1</a><a>2</a></auth></config-auth>')).toBe("auth_bad_request");
    expect(code(XML_CT, '<config-auth type="auth-reply"><auth><a><b/></a></auth></config-auth>')).toBe("auth_bad_request");
    expect(code(XML_CT, "<config-auth")).toBe("xml_malformed");
    expect(code(XML_CT, "not xml")).toBe("xml_malformed");
    expect(code(XML_CT, '<!DOCTYPE x [<!ENTITY a "b">]><config-auth type="init"/>')).toBe("xml_forbidden_dtd");
    expect(parseAuthRequest(XML_CT, new Uint8Array([0x3c, 0x61, 0xff, 0x2f, 0x3e])).ok).toBe(false);
  });
  test("limits", () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `<f${i}>x</f${i}>`).join("");
    expect(code(XML_CT, `<config-auth type="auth-reply"><auth>${fields(64)}</auth></config-auth>`)).toBe("ok");
    expect(code(XML_CT, `<config-auth type="auth-reply"><auth>${fields(65)}</auth></config-auth>`)).toBe("auth_bad_request");
    expect(code(XML_CT, `<config-auth type="auth-reply"><auth><p>${"x".repeat(4096)}</p></auth></config-auth>`)).toBe("ok");
    expect(code(XML_CT, `<config-auth type="auth-reply"><auth><p>${"x".repeat(4097)}</p></auth></config-auth>`)).toBe("auth_bad_request");
    expect(code(XML_CT, `<config-auth type="auth-reply"><auth><p>xx</p></auth></config-auth>`, { maxFieldLength: 1 })).toBe("auth_bad_request");
    expect(code(XML_CT, INIT, { maxBodyBytes: 100 })).toBe("auth_bad_request");
  });
});

describe("parseAuthRequest: form", () => {
  test("fallback flow (§2.9): group_list first", () => {
    const r = parse(FORM_CT, "group_list=eng&username=alice&password=secret123");
    expect(r.dialect).toBe("form");
    expect(r.kind).toBe("form-post");
    expect(r.groupSelect).toBe("eng");
    expect([...r.fields]).toEqual([
      ["username", "alice"],
      ["password", "secret123"],
    ]);
    expect(r.capabilities).toEqual([]);
  });
  test("spec's literal field names: group", () => {
    const r = parse(FORM_CT, "username=bob&password=pw&group=ops");
    expect(r.groupSelect).toBe("ops");
    expect(r.fields.has("group")).toBe(false);
  });
  test("group_list and group must agree", () => {
    expect(parse(FORM_CT, "group_list=a&group=a").groupSelect).toBe("a");
    expect(code(FORM_CT, "group_list=a&group=b")).toBe("auth_bad_request");
  });
  test("decoding: + as space, %XX as UTF-8 bytes, escaped names", () => {
    const r = parse(`${FORM_CT}; charset=UTF-8`, "username=a+b%20c&password=p%26%3D%2B%25&group%5flist=eng&n=zo%C3%AB");
    expect(r.fields.get("username")).toBe("a b c");
    expect(r.fields.get("password")).toBe("p&=+%");
    expect(r.fields.get("n")).toBe("zoë");
    expect(r.groupSelect).toBe("eng");
  });
  test("OTP challenge answer", () => {
    expect(parse(FORM_CT, "otp=123456").fields.get("otp")).toBe("123456");
  });
  test("no content type is read as a form", () => {
    expect(parse(undefined, "username=a").dialect).toBe("form");
  });
  test("empty pairs, missing '=', trailing padding", () => {
    const r = parse(FORM_CT, "&username=a&&flag&password=&\r\n  \0");
    expect([...r.fields]).toEqual([
      ["username", "a"],
      ["flag", ""],
      ["password", ""],
    ]);
  });
  test("rejections", () => {
    expect(code(FORM_CT, "a=%zz")).toBe("auth_bad_request");
    expect(code(FORM_CT, "a=%4")).toBe("auth_bad_request");
    expect(code(FORM_CT, "a=%ff")).toBe("auth_bad_request");
    expect(code(FORM_CT, "=x")).toBe("auth_bad_request");
    expect(code(FORM_CT, "a=1&a=2")).toBe("auth_bad_request");
    expect(code("multipart/form-data; boundary=x", "--x")).toBe("auth_bad_request");
    expect(code("application/json", '{"a":1}')).toBe("auth_bad_request");
  });
  test("limits", () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => `f${i}=x`).join("&");
    expect(code(FORM_CT, pairs(64))).toBe("ok");
    expect(code(FORM_CT, pairs(65))).toBe("auth_bad_request");
    expect(code(FORM_CT, pairs(3), { maxFields: 2 })).toBe("auth_bad_request");
    expect(code(FORM_CT, `p=${"x".repeat(4096)}`)).toBe("ok");
    expect(code(FORM_CT, `p=${"x".repeat(4097)}`)).toBe("auth_bad_request");
    expect(code(FORM_CT, `${"n".repeat(4097)}=1`)).toBe("auth_bad_request");
  });
});

describe("parseAuthRequest: empty", () => {
  test("fallback GET with form content type and no body (§2.2)", () => {
    const r = parse(FORM_CT, "");
    expect(r).toEqual({ dialect: "form", kind: "empty", fields: new Map(), capabilities: [] });
  });
  test("XML content type, whitespace only", () => {
    expect(parse(XML_CT, " \r\n").dialect).toBe("xml");
    expect(parse(XML_CT, " \r\n").kind).toBe("empty");
  });
  test("no content type", () => {
    expect(parse(undefined, "").kind).toBe("empty");
  });
  test("unsupported content type, empty body", () => {
    expect(code("application/json", "")).toBe("auth_bad_request");
  });
});
