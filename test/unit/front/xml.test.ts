import { describe, expect, test } from "bun:test";
import { attr, child, children, escapeXmlAttr, escapeXmlText, parseXmlDocument, renderXml, text, xmlDocument } from "../../../src/front/xml.ts";

const INIT = `<?xml version="1.0" encoding="UTF-8"?>
<config-auth client="vpn" type="init" aggregate-auth-version="2">
  <version who="vpn">v9.01-3</version>
  <device-id>linux-64</device-id>
  <capabilities>
    <auth-method>single-sign-on-v2</auth-method>
    <auth-method>single-sign-on-external-browser</auth-method>
  </capabilities>
  <group-access>https://vpn.example:24443/</group-access>
</config-auth>`;

function root(s: string) {
  const r = parseXmlDocument(s);
  if (!r.ok) throw r.error;
  return r.value;
}
function code(s: string, max?: number) {
  const r = parseXmlDocument(s, max);
  return r.ok ? "ok" : r.error.code;
}

describe("parseXmlDocument", () => {
  test("openconnect init (docs/protocol.md §2.3)", () => {
    const el = root(INIT);
    expect(el.name).toBe("config-auth");
    expect(attr(el, "type")).toBe("init");
    expect(attr(el, "missing")).toBeUndefined();
    expect(text(child(el, "device-id")!)).toBe("linux-64");
    expect(attr(child(el, "version")!, "who")).toBe("vpn");
    expect(children(child(el, "capabilities")!, "auth-method").map(text)).toEqual(["single-sign-on-v2", "single-sign-on-external-browser"]);
    expect(children(el).map((c) => c.name)).toEqual(["version", "device-id", "capabilities", "group-access"]);
    expect(child(el, "nope")).toBeUndefined();
    expect(children(el, "nope")).toEqual([]);
  });
  test("names are case-sensitive", () => {
    expect(child(root("<a><B/></a>"), "b")).toBeUndefined();
  });
  test("entities, char refs and CDATA decode; text is not trimmed", () => {
    const el = root("<a> x &amp; &lt;&#65;&#x42;<![CDATA[<c>]]> </a>");
    expect(text(el)).toBe(" x & <AB<c> ");
  });
  test("text includes descendants", () => {
    expect(text(root("<a>1<b>2</b>3</a>"))).toBe("123");
  });
  test("attr does not see prototype properties", () => {
    expect(attr(root("<a/>"), "toString")).toBeUndefined();
    expect(attr(root("<a constructor='x'/>"), "constructor")).toBe("x");
  });
  test("DOCTYPE and ENTITY declarations are refused (billion laughs, XXE)", () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>`;
    expect(code(laughs)).toBe("xml_forbidden_dtd");
    expect(code(`<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>`)).toBe("xml_forbidden_dtd");
    expect(code(`<!DOCTYPE html><html/>`)).toBe("xml_forbidden_dtd");
    expect(code(`<!doctype html><html/>`)).toBe("xml_forbidden_dtd");
    expect(code(`<a><!ENTITY x "y"></a>`)).toBe("xml_forbidden_dtd");
    expect(code(`<a><!-- <!DOCTYPE x> --></a>`)).toBe("xml_forbidden_dtd");
  });
  test("undefined entities are malformed", () => {
    expect(code("<a>&xxe;</a>")).toBe("xml_malformed");
  });
  test("size limit in UTF-8 bytes", () => {
    expect(code("<a>xxxx</a>", 11)).toBe("ok");
    expect(code("<a>xxxx</a>", 10)).toBe("xml_too_large");
    expect(code("<a>éé</a>", 11)).toBe("ok");
    expect(code("<a>ééé</a>", 11)).toBe("xml_too_large");
    expect(code(`<a>${"x".repeat(70000)}</a>`)).toBe("xml_too_large");
  });
  test("malformed documents say where", () => {
    const r = parseXmlDocument("<a>\n  <b>\n</a>");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("xml_malformed");
    expect(r.error.message).toMatch(/line \d+, column \d+/);
    expect(r.error.message).not.toContain("\n");
    for (const s of ["", "   ", "plain text", "<a>", "<a></b>", "<a/><b/>", "<a x=1/>", "<a>\u0001</a>", "<?xml version='1.0'?>"]) {
      expect(code(s)).toBe("xml_malformed");
    }
  });
});

describe("XML writer", () => {
  test("escapeXmlText", () => {
    expect(escapeXmlText(`a & b < c > d "e" 'f'`)).toBe(`a &amp; b &lt; c &gt; d "e" 'f'`);
    expect(escapeXmlText("]]>")).toBe("]]&gt;");
    expect(escapeXmlText("&amp;")).toBe("&amp;amp;");
  });
  test("escapeXmlAttr", () => {
    expect(escapeXmlAttr(`a&<>"'`)).toBe("a&amp;&lt;&gt;&quot;&apos;");
    expect(escapeXmlAttr("a\tb\nc\rd")).toBe("a&#9;b&#10;c&#13;d");
  });
  test("characters XML cannot carry become U+FFFD", () => {
    expect(escapeXmlText("a\u0000b\u0001c\u001fd\ufffe")).toBe("a\ufffdb\ufffdc\ufffdd\ufffd");
    expect(escapeXmlText("x\ud800y")).toBe("x\ufffdy");
    expect(escapeXmlText("x\udc00y")).toBe("x\ufffdy");
    expect(escapeXmlText("😀\t\n")).toBe("😀\t\n");
    expect(escapeXmlAttr("a\u0002")).toBe("a\ufffd");
  });
  test("renderXml: attributes, nesting, skipped children, self-closing", () => {
    const out = renderXml({
      name: "config-auth",
      attrs: { client: "vpn", type: "auth-request", skipped: undefined },
      children: [
        { name: "opaque", attrs: { "is-for": "sg" }, children: [{ name: "tunnel-group", children: ["default"] }] },
        false,
        undefined,
        {
          name: "auth",
          attrs: { id: "main" },
          children: [
            { name: "message", children: ["Enter <user> & pass"] },
            { name: "form", attrs: { method: "post", action: "/auth" }, children: [{ name: "input", attrs: { type: "text", name: "username", label: 'Say "hi"' } }] },
          ],
        },
        { name: "empty", children: [""] },
      ],
    });
    expect(out).toBe(
      '<config-auth client="vpn" type="auth-request"><opaque is-for="sg"><tunnel-group>default</tunnel-group></opaque>' +
        '<auth id="main"><message>Enter &lt;user&gt; &amp; pass</message><form method="post" action="/auth">' +
        '<input type="text" name="username" label="Say &quot;hi&quot;"/></form></auth><empty></empty></config-auth>',
    );
  });
  test("rendered output round-trips through the parser", () => {
    const nasty = `<&>"'\t\n]]>${"\u0007"}é😀`;
    const out = xmlDocument({ name: "a", attrs: { v: nasty }, children: [nasty, { name: "b", children: [nasty] }] });
    expect(out.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<a ')).toBe(true);
    const el = root(out);
    const clean = nasty.replace("\u0007", "\ufffd");
    expect(attr(el, "v")).toBe(clean);
    expect(text(child(el, "b")!)).toBe(clean);
    expect(text(el)).toBe(clean + clean);
  });
  test("invalid names throw (they are programming errors)", () => {
    expect(() => renderXml({ name: "a b" })).toThrow();
    expect(() => renderXml({ name: "<a>" })).toThrow();
    expect(() => renderXml({ name: "a", attrs: { 'x="1" y': "v" } })).toThrow();
  });
  test("xmlDocument prefix", () => {
    expect(xmlDocument({ name: "auth", attrs: { id: "success" } })).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<auth id="success"/>');
  });
});
