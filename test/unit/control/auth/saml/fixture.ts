import { generateKeyPairSync } from "node:crypto";
import { AuthStats } from "../../../../../src/control/auth/auth-stats.ts";
import { LoginFlow } from "../../../../../src/control/auth/login-flow.ts";
import { PasswordStep } from "../../../../../src/control/auth/password-step.ts";
import { SamlLogins } from "../../../../../src/control/auth/saml/saml-logins.ts";
import { SAML_PATHS } from "../../../../../src/control/auth/saml/saml-paths.ts";
import { SamlProvider } from "../../../../../src/control/auth/saml/saml-provider.ts";
import { SamlStep } from "../../../../../src/control/auth/saml/saml-step.ts";
import { GroupService } from "../../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../../src/control/sessions.ts";
import { UserService } from "../../../../../src/control/users.ts";
import { openSqliteStore } from "../../../../../src/store/sqlite-store.ts";
import { handleAuthRequest } from "../../../../../src/front/auth-endpoint.ts";
import { HeaderList, type HttpRequest } from "../../../../../src/front/http-head.ts";
import type { ResponseSpec } from "../../../../../src/front/http-response.ts";
import { handleSamlRequest, type SamlFront } from "../../../../../src/front/saml-endpoints.ts";
import { attr, child, parseXmlDocument, text, type XmlElement } from "../../../../../src/front/xml.ts";
import { fakeHasher } from "../../../api/fixture.ts";
import { createIdpKeys, IDP_ENTITY_ID, readAuthnRequest, signedResponse, type ResponseOptions } from "../../../../e2e/fixtures/test-idp.ts";

export const BASE = "https://vpn.test.example";
export const ENTITY_ID = `${BASE}${SAML_PATHS.metadata}`;
export const ACS = `${BASE}${SAML_PATHS.acs}`;
export const idpKeys = createIdpKeys();

export const CAPS_EXTERNAL = ["single-sign-on-v2", "single-sign-on-external-browser"];

const enc = (s: string) => new TextEncoder().encode(s);

/** The gateway's login side (flow, SAML step, endpoints) in-process, with a client P-256 DH key. */
export async function samlFixture(o: { groupAttribute?: string } = {}) {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const users = new UserService(store.value, fakeHasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  groups.add("sso", { auth: "saml", routes: ["198.51.100.0/24"] });
  groups.add("eng", { auth: "saml" });
  groups.add("staff", { auth: "password" });
  await users.add({ name: "alice", password: "pw-alice", groups: ["sso"] });
  await users.add({ name: "bob", password: "pw-bob", groups: ["staff"] });
  await users.add({ name: "dave", password: "pw-dave", groups: ["sso"], disabled: true });
  const logs: string[] = [];
  const provider = new SamlProvider({ idpUrl: "https://idp.test.example/sso", idpCertPem: idpKeys.certPem, entityId: ENTITY_ID, acsUrl: ACS, groupAttribute: o.groupAttribute, now: Date.now });
  const logins = new SamlLogins({ provider, now: Date.now, log: (m) => logs.push(m) });
  const step = new SamlStep({ logins, baseUrl: BASE, findUser: (n) => store.value.getUser(n), groupExists: (n) => groups.get(n).ok });
  const flow = new LoginFlow({ users, groups, sessions: new SessionRegistry(300_000, Date.now), stats: new AuthStats(), steps: { password: new PasswordStep(users), saml: step }, now: Date.now, log: (m) => logs.push(m) });
  const front: SamlFront = { logins, metadata: () => provider.metadata(), finalUrl: `${BASE}${SAML_PATHS.final}` };
  const dh = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const dhHeader = dh.publicKey.export({ format: "der", type: "spki" }).toString("base64");

  const request = (method: string, target: string, body = "", headers: [string, string][] = []): HttpRequest => ({
    method,
    target,
    version: "HTTP/1.1",
    headers: new HeaderList(headers),
    body: enc(body),
  });
  /** An XML init / auth-reply as openconnect 9.01 posts it (docs/protocol.md §2.3, §2.5). */
  const post = async (type: "init" | "auth-reply", x: { caps?: string[]; group?: string; handle?: string; fields?: Record<string, string>; dh?: string | null } = {}) => {
    const caps = (x.caps ?? CAPS_EXTERNAL).map((c) => `<auth-method>${c}</auth-method>`).join("");
    const body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<config-auth client="vpn" type="${type}" aggregate-auth-version="2"><version who="vpn">v9.01-3</version><device-id>linux-64</device-id><capabilities>${caps}</capabilities>` +
      (x.handle ? `<opaque is-for="sg"><auth-handle>${x.handle}</auth-handle></opaque>` : "") +
      (x.fields ? `<auth>${Object.entries(x.fields).map(([k, v]) => `<${k}>${v}</${k}>`).join("")}</auth>` : "") +
      (x.group ? `<group-select>${x.group}</group-select>` : "") +
      `</config-auth>`;
    const headers: [string, string][] = [["Content-Type", "application/xml; charset=utf-8"]];
    const key = x.dh === undefined ? dhHeader : x.dh;
    if (key !== null) headers.push(["X-AnyConnect-STRAP-DH-Pubkey", key]);
    const response = await handleAuthRequest(request("POST", "/", body, headers), flow, { peer: "203.0.113.2:5000", ip: "203.0.113.2" });
    return { response, doc: xmlOf(response) };
  };
  const saml = (method: string, target: string, body = "", contentType = "application/x-www-form-urlencoded") =>
    handleSamlRequest(request(method, target, body, [["Content-Type", contentType]]), front);
  /** GET the login URL, as a browser would: the IdP URL with the AuthnRequest. */
  const toIdp = async (loginUrl: string) => {
    const r = await saml("GET", loginUrl.slice(BASE.length));
    if (r.status !== 302) throw new Error(`login answered ${r.status}: ${String(r.body)}`);
    return readAuthnRequest(header(r, "Location")!);
  };
  const idpAnswer = (req: { id: string; acsUrl: string; issuer: string }, extra: Partial<ResponseOptions> = {}) =>
    signedResponse(idpKeys, { inResponseTo: req.id, acsUrl: req.acsUrl, audience: req.issuer, nameId: "alice", ...extra });
  const postAcs = (samlResponse: string, relayState: string) =>
    saml("POST", SAML_PATHS.acs, `SAMLResponse=${encodeURIComponent(samlResponse)}&RelayState=${encodeURIComponent(relayState)}`);
  return { store: store.value, users, groups, flow, logins, front, dh, dhHeader, post, saml, toIdp, idpAnswer, postAcs, logs, IDP_ENTITY_ID };
}

export function header(r: ResponseSpec, name: string): string | undefined {
  return r.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
}

export function xmlOf(r: ResponseSpec): XmlElement {
  const parsed = parseXmlDocument(typeof r.body === "string" ? r.body : new TextDecoder().decode(r.body));
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

/** What openconnect reads from an auth-request document. */
export function ssoOf(doc: XmlElement) {
  const auth = child(doc, "auth")!;
  const value = (name: string) => {
    const el = child(auth, name);
    return el ? text(el) : undefined;
  };
  const form = child(auth, "form");
  const input = form ? child(form, "input") : undefined;
  return {
    authId: attr(auth, "id"),
    login: value("sso-v2-login"),
    final: value("sso-v2-login-final"),
    tokenCookie: value("sso-v2-token-cookie-name"),
    errorCookie: value("sso-v2-error-cookie-name"),
    browserMode: value("sso-v2-browser-mode"),
    error: value("error"),
    input: input ? { type: attr(input, "type"), name: attr(input, "name") } : undefined,
    handle: text(child(child(doc, "opaque") ?? doc, "auth-handle") ?? doc),
  };
}
