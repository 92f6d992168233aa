import { describe, expect, test } from "bun:test";
import { SAML_PATHS } from "../../../../../src/control/auth/saml/saml-paths.ts";
import { HANDOFF_URL } from "../../../../../src/front/saml-endpoints.ts";
import { tampered } from "../../../../e2e/fixtures/test-idp.ts";
import { ACS, BASE, ENTITY_ID, header, samlFixture, ssoOf } from "./fixture.ts";
import { openHandoff } from "./openconnect-handoff.ts";

type Fx = Awaited<ReturnType<typeof samlFixture>>;

/** init for the SSO group: the sso-v2 form, and the browser sent on to the IdP. */
async function start(fx: Fx, group = "sso") {
  const { doc } = await fx.post("init", { group });
  const sso = ssoOf(doc);
  const request = await fx.toIdp(sso.login!);
  return { sso, request };
}

/** The ACS answer in external mode: the token the client decrypts from the localhost redirect. */
function tokenFrom(fx: Fx, location: string): string {
  expect(location.startsWith(HANDOFF_URL)).toBe(true);
  const url = new URL(location);
  expect(url.hostname).toBe("localhost");
  expect(url.port).toBe("29786");
  expect(url.searchParams.get("return")).toStartWith(`${BASE}${SAML_PATHS.final}`);
  const blob = Buffer.from(decodeURIComponent(url.pathname.slice("/api/sso/".length)), "base64");
  return openHandoff(blob, fx.dh.privateKey);
}

async function finish(fx: Fx, handle: string, token: string) {
  const { doc, response } = await fx.post("auth-reply", { handle, group: "sso", fields: { "sso-token": token } });
  return { doc, response, auth: ssoOf(doc) };
}

describe("SAML SSO, external browser (docs/protocol.md §4.2, §4.3)", () => {
  test("the sso-v2 form, AuthnRequest, signed assertion, encrypted hand-off, token posted: success", async () => {
    const fx = await samlFixture();
    const { sso, request } = await start(fx);
    expect(sso.authId).toBe("main");
    expect(sso.login).toStartWith(`${BASE}${SAML_PATHS.login}?handle=`);
    expect(sso.final).toBe(`${BASE}/+CSCOE+/saml_ac_login.html`);
    expect(sso.tokenCookie).toBe("acSamlv2Token");
    expect(sso.errorCookie).toBe("acSamlv2Error");
    expect(sso.browserMode).toBe("external");
    expect(sso.input).toEqual({ type: "sso", name: "sso-token" });
    expect(request.issuer).toBe(ENTITY_ID);
    expect(request.acsUrl).toBe(ACS);
    expect(request.id).toMatch(/^_[0-9a-f]{40}$/);
    expect(sso.login).toContain(request.relayState);

    const acs = await fx.postAcs(fx.idpAnswer(request), request.relayState);
    expect(acs.status).toBe(302);
    const token = tokenFrom(fx, header(acs, "Location")!);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(new URL(header(acs, "Location")!).searchParams.get("return")).toBe(`${BASE}${SAML_PATHS.final}`);

    const { response, auth } = await finish(fx, sso.handle, token);
    expect(auth.authId).toBe("success");
    expect(response.headers.some(([n, v]) => n === "Set-Cookie" && v.startsWith("webvpn="))).toBe(true);
  });

  test("the same assertion posted again is refused: the login is finished, and a new login cannot use it", async () => {
    const fx = await samlFixture();
    const first = await start(fx);
    const assertion = fx.idpAnswer(first.request);
    expect((await fx.postAcs(assertion, first.request.relayState)).status).toBe(302);
    const again = await fx.postAcs(assertion, first.request.relayState);
    expect(again.status).toBe(400);
    expect(String(again.body)).toContain("already finished");

    // A second login, the old response posted with its RelayState: refused, and the client is told why.
    const second = await start(fx);
    const acs = await fx.postAcs(assertion, second.request.relayState);
    const { auth } = await finish(fx, second.sso.handle, tokenFrom(fx, header(acs, "Location")!));
    expect(auth.authId).not.toBe("success");
    expect(auth.error).toContain("Single sign-on failed");
    expect(auth.error).toContain("InResponseTo");
  });

  test("an assertion ID is accepted once even if an IdP re-issues it for another request", async () => {
    const fx = await samlFixture();
    const a = await start(fx);
    const acsA = await fx.postAcs(fx.idpAnswer(a.request, { assertionId: "_fixed-id" }), a.request.relayState);
    expect((await finish(fx, a.sso.handle, tokenFrom(fx, header(acsA, "Location")!))).auth.authId).toBe("success");
    const b = await start(fx);
    const acsB = await fx.postAcs(fx.idpAnswer(b.request, { assertionId: "_fixed-id" }), b.request.relayState);
    const { auth } = await finish(fx, b.sso.handle, tokenFrom(fx, header(acsB, "Location")!));
    expect(auth.error).toContain("used already");
  });

  const refusals: [string, (fx: Fx, r: Awaited<ReturnType<typeof start>>["request"]) => string, string | RegExp][] = [
    ["tampered assertion (NameID changed after signing)", (fx, r) => tampered(fx.idpAnswer(r), "alice", "bob"), "signature"],
    ["wrong audience", (fx, r) => fx.idpAnswer(r, { audience: "https://someone-else.example/" }), "audience"],
    ["expired assertion", (fx, r) => fx.idpAnswer(r, { notBeforeMs: -20 * 60_000, notOnOrAfterMs: -10 * 60_000 }), /expired|no valid subject confirmation/i],
    ["not yet valid assertion", (fx, r) => fx.idpAnswer(r, { notBeforeMs: 10 * 60_000, notOnOrAfterMs: 20 * 60_000 }), "not yet valid"],
    ["answer to another request (InResponseTo)", (fx, r) => fx.idpAnswer({ ...r, id: "_not-ours" }), "InResponseTo"],
    ["unknown user", (fx, r) => fx.idpAnswer(r, { nameId: "carol" }), "not known to this gateway"],
    ["disabled user", (fx, r) => fx.idpAnswer(r, { nameId: "dave" }), "disabled"],
  ];
  for (const [name, make, message] of refusals) {
    test(`refused: ${name}`, async () => {
      const fx = await samlFixture();
      const { sso, request } = await start(fx);
      const acs = await fx.postAcs(make(fx, request), request.relayState);
      expect(acs.status).toBe(302);
      const { auth } = await finish(fx, sso.handle, tokenFrom(fx, header(acs, "Location")!));
      expect(auth.authId).not.toBe("success");
      if (!/not known|disabled/.test(String(message))) {
        // The browser ends on the final page saying the login was refused (the client says why).
        expect(new URL(header(acs, "Location")!).searchParams.get("return")).toBe(`${BASE}${SAML_PATHS.final}?status=refused`);
        expect(String((await fx.saml("GET", `${SAML_PATHS.final}?status=refused`)).body)).toContain("refused");
      }
      if (typeof message === "string") expect(auth.error).toContain(message);
      else expect(auth.error).toMatch(message);
    });
  }

  test("an unsigned assertion and a response signed by another key are refused", async () => {
    const fx = await samlFixture();
    const { createIdpKeys, signedResponse } = await import("../../../../e2e/fixtures/test-idp.ts");
    const { sso, request } = await start(fx);
    const forged = signedResponse(createIdpKeys(), { inResponseTo: request.id, acsUrl: request.acsUrl, audience: request.issuer, nameId: "alice" });
    const acs = await fx.postAcs(forged, request.relayState);
    const { auth } = await finish(fx, sso.handle, tokenFrom(fx, header(acs, "Location")!));
    expect(auth.error).toContain("signature");
    const next = await start(fx);
    const xml = Buffer.from(fx.idpAnswer(next.request), "base64").toString("utf8");
    const unsigned = xml.replace(/<Signature [\s\S]*<\/Signature>/, "");
    expect(unsigned).not.toContain("SignatureValue");
    const acs2 = await fx.postAcs(Buffer.from(unsigned).toString("base64"), next.request.relayState);
    const second = await finish(fx, next.sso.handle, tokenFrom(fx, header(acs2, "Location")!));
    expect(second.auth.authId).not.toBe("success");
    expect(second.auth.error).toContain("signature");
  });

  test("a token works once, only for its own login context", async () => {
    const fx = await samlFixture();
    const { sso, request } = await start(fx);
    const acs = await fx.postAcs(fx.idpAnswer(request), request.relayState);
    const token = tokenFrom(fx, header(acs, "Location")!);
    const other = ssoOf((await fx.post("init", { group: "sso" })).doc);
    expect((await finish(fx, other.handle, token)).auth.authId).not.toBe("success");
    expect((await finish(fx, sso.handle, token)).auth.authId).toBe("success");
    expect((await finish(fx, sso.handle, token)).auth.authId).not.toBe("success");
  });

  test("unknown or missing RelayState, and a login URL with an unknown handle: 400, nothing happens", async () => {
    const fx = await samlFixture();
    const { request } = await start(fx);
    expect((await fx.postAcs(fx.idpAnswer(request), "nope")).status).toBe(400);
    expect((await fx.saml("POST", SAML_PATHS.acs, "SAMLResponse=abc")).status).toBe(400);
    expect((await fx.saml("POST", SAML_PATHS.acs, "<x/>", "text/xml")).status).toBe(415);
    expect((await fx.saml("GET", `${SAML_PATHS.login}?handle=unknown`)).status).toBe(400);
    expect((await fx.postAcs("bm90IHhtbA==", request.relayState)).status).toBe(302); // garbage: handled as a refused assertion
  });
});

describe("SAML SSO, capabilities and webview mode", () => {
  test("a client without single-sign-on-v2 gets a clear refusal, no form", async () => {
    const fx = await samlFixture();
    const { doc } = await fx.post("init", { group: "sso", caps: [] });
    const sso = ssoOf(doc);
    expect(sso.authId).not.toBe("main");
    expect(sso.input).toBeUndefined();
    expect(sso.error).toContain("single-sign-on-v2");
  });

  test("external mode needs a P-256 DH key; without the external capability the form is webview mode", async () => {
    const fx = await samlFixture();
    const bad = ssoOf((await fx.post("init", { group: "sso", dh: "AAAA" })).doc);
    expect(bad.input).toBeUndefined();
    expect(bad.error).toContain("X-AnyConnect-STRAP-DH-Pubkey");
    const webview = ssoOf((await fx.post("init", { group: "sso", caps: ["single-sign-on-v2"], dh: null })).doc);
    expect(webview.input).toEqual({ type: "sso", name: "sso-token" });
    expect(webview.browserMode).toBeUndefined();
  });

  test("webview: the ACS sets the token cookie and redirects to the final URL; the token logs in", async () => {
    const fx = await samlFixture();
    const sso = ssoOf((await fx.post("init", { group: "sso", caps: ["single-sign-on-v2"], dh: null })).doc);
    const request = await fx.toIdp(sso.login!);
    const acs = await fx.postAcs(fx.idpAnswer(request), request.relayState);
    expect(acs.status).toBe(302);
    expect(header(acs, "Location")).toBe(sso.final);
    const cookie = header(acs, "Set-Cookie")!;
    const token = /^acSamlv2Token=([0-9a-f]{64});/.exec(cookie)?.[1];
    expect(token).toBeDefined();
    const final = await fx.saml("GET", SAML_PATHS.final);
    expect(final.status).toBe(200);
    const { doc } = await fx.post("auth-reply", { handle: sso.handle, group: "sso", caps: ["single-sign-on-v2"], dh: null, fields: { "sso-token": token! } });
    expect(ssoOf(doc).authId).toBe("success");
  });

  test("webview: a refused assertion sets the error cookie instead", async () => {
    const fx = await samlFixture();
    const sso = ssoOf((await fx.post("init", { group: "sso", caps: ["single-sign-on-v2"], dh: null })).doc);
    const request = await fx.toIdp(sso.login!);
    const acs = await fx.postAcs(fx.idpAnswer(request, { audience: "https://x.example/" }), request.relayState);
    expect(header(acs, "Set-Cookie")).toStartWith("acSamlv2Error=");
    expect(header(acs, "Set-Cookie")).not.toContain("acSamlv2Token");
  });

  test("metadata names our entity id and the ACS (HTTP-POST)", async () => {
    const fx = await samlFixture();
    const r = await fx.saml("GET", SAML_PATHS.metadata);
    expect(r.status).toBe(200);
    expect(header(r, "Content-Type")).toContain("samlmetadata+xml");
    expect(String(r.body)).toContain(`entityID="${ENTITY_ID}"`);
    expect(String(r.body)).toContain(`Location="${ACS}"`);
    expect(String(r.body)).toContain("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST");
  });

  test("without SAML configured the SP paths are 404", async () => {
    const { handleSamlRequest } = await import("../../../../../src/front/saml-endpoints.ts");
    const { HeaderList } = await import("../../../../../src/front/http-head.ts");
    const r = await handleSamlRequest({ method: "POST", target: SAML_PATHS.acs, version: "HTTP/1.1", headers: new HeaderList(), body: new Uint8Array() }, undefined);
    expect(r.status).toBe(404);
  });
});

describe("SAML SSO, groups from an assertion attribute", () => {
  const login = async (fx: Fx, group: string, groups: string[]) => {
    const { sso, request } = await start(fx, group);
    const acs = await fx.postAcs(fx.idpAnswer(request, { attributes: { memberOf: groups } }), request.relayState);
    const { doc, response } = await fx.post("auth-reply", { handle: sso.handle, group, fields: { "sso-token": tokenFrom(fx, header(acs, "Location")!) } });
    return { auth: ssoOf(doc), response };
  };

  test("the asserted groups replace the stored ones: alice (stored: sso) logs in to eng", async () => {
    const fx = await samlFixture({ groupAttribute: "memberOf" });
    expect((await login(fx, "eng", ["eng", "unknown-group"])).auth.authId).toBe("success");
  });

  test("a group the IdP does not assert is refused; no known group at all is refused", async () => {
    const fx = await samlFixture({ groupAttribute: "memberOf" });
    const notMember = await login(fx, "eng", ["sso"]);
    expect(notMember.auth.authId).not.toBe("success");
    const none = await login(fx, "sso", ["nothing-here"]);
    expect(none.auth.error).toContain("no group of this gateway");
  });
});
