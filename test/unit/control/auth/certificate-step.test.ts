import { ok } from "../../../../src/errors.ts";
import { describe, expect, test } from "bun:test";
import { createHash, X509Certificate } from "node:crypto";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import type { LoginClient } from "../../../../src/control/auth/auth-step.ts";
import { CertificateStep } from "../../../../src/control/auth/certificate-step.ts";
import { LoginFlow, type LoginOutcome } from "../../../../src/control/auth/login-flow.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { GroupService } from "../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { UserService } from "../../../../src/control/users.ts";
import { createCertificateAuthority } from "../../../../src/pki/ca.ts";
import { loadClientCertTrust } from "../../../../src/pki/client-cert-trust.ts";
import { issueClientCertificate, type ClientCertificateOptions } from "../../../../src/pki/client-cert.ts";
import { verifyClientCertificate, type CertUserAttribute } from "../../../../src/pki/verify-client-cert.ts";
import type { PasswordHasher } from "../../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";

const fakeHasher: PasswordHasher = {
  hash: async (p) => ok(`fake$${createHash("sha256").update(p).digest("hex")}`),
  verify: async (p, phc) => ok(phc === `fake$${createHash("sha256").update(p).digest("hex")}`),
};

const ca = createCertificateAuthority({ commonName: "unit client CA" });
const otherCa = createCertificateAuthority({ commonName: "unit client CA" });
const trust = (() => {
  const t = loadClientCertTrust(ca.certPem);
  if (!t.ok) throw t.error;
  return t.value;
})();

/** What the tunnel front hands the login for a connection that presented this certificate. */
function presented(o: Partial<ClientCertificateOptions> & { commonName: string }): LoginClient["certificate"] {
  const issued = issueClientCertificate({ ca, days: 30, ...o });
  return verifyClientCertificate([new Uint8Array(new X509Certificate(issued.certPem).raw)], trust);
}

async function fixture(attribute: CertUserAttribute = "cn") {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const users = new UserService(store.value, fakeHasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  groups.add("certonly", { auth: "certificate" });
  groups.add("certpw", { auth: "certificate+password" });
  groups.add("staff", {});
  groups.add("samlonly", { auth: "saml" });
  await users.add({ name: "carol", groups: ["certonly"] });
  await users.add({ name: "dave", password: "pw-dave", groups: ["certpw"] });
  await users.add({ name: "erin", password: "pw-erin", groups: ["certpw"] });
  await users.add({ name: "alice", password: "pw-alice", groups: ["staff"] });
  await users.add({ name: "mallory", groups: ["certonly"], disabled: true });
  await users.add({ name: "frank@example.com", groups: ["certonly"] });
  await users.add({ name: "grace", groups: ["samlonly"] });
  const stats = new AuthStats();
  const flow = new LoginFlow({
    users,
    groups,
    sessions: new SessionRegistry(300_000, Date.now),
    stats,
    steps: {
      password: new PasswordStep(users),
      certificate: new CertificateStep({ findUser: (name) => store.value.getUser(name), attribute }),
    },
    now: Date.now,
    log: () => {},
  });
  const client = (certificate?: LoginClient["certificate"]): LoginClient => ({ peer: "test", ip: "192.0.2.9", capabilities: [], certificate });
  const init = (certificate: LoginClient["certificate"], group?: string) => flow.handle({ kind: "init", answers: new Map(), group, client: client(certificate) });
  const answer = (certificate: LoginClient["certificate"], contextId: string, fields: Record<string, string>) =>
    flow.handle({ kind: "answer", contextId, answers: new Map(Object.entries(fields)), client: client(certificate) });
  return { flow, stats, init, answer };
}

const expectKind = <K extends LoginOutcome["kind"]>(o: LoginOutcome, kind: K) => {
  expect(o.kind).toBe(kind);
  return o as Extract<LoginOutcome, { kind: K }>;
};

describe("CertificateStep in the login flow", () => {
  test("certificate only: the init itself logs in, in the user's group", async () => {
    const { init, stats } = await fixture();
    const ok = expectKind(await init(presented({ commonName: "carol" })), "success");
    expect(ok.session.user).toBe("carol");
    expect(ok.session.group).toBe("certonly");
    expect(stats.successes).toBe(1);
  });

  test("certificate+password: the password of the certificate's user, typed name must match", async () => {
    const { init, answer } = await fixture();
    const cert = presented({ commonName: "dave" });
    const form = expectKind(await init(cert), "form");
    expect(form.form.authId).toBe("challenge");
    expect(form.form.fields.map((f) => f.name)).toEqual(["username", "password"]);
    expect(form.form.fields[0]?.value).toBe("dave");
    const other = expectKind(await answer(cert, form.contextId, { username: "erin", password: "pw-erin" }), "form");
    expect(other.form.error).toBe("The user name must be the certificate's: dave.");
    const wrong = expectKind(await answer(cert, other.contextId, { username: "dave", password: "nope" }), "form");
    expect(wrong.form.error).toContain("wrong user name or password");
    const ok = expectKind(await answer(cert, wrong.contextId, { username: "dave", password: "pw-dave" }), "success");
    expect(ok.session.user).toBe("dave");
  });

  test("a certificate that fails the check is refused with the verifier's message when only certificates are allowed", async () => {
    const { init, stats } = await fixture();
    const expired = presented({ commonName: "carol", notBefore: new Date(Date.now() - 10 * 86_400_000), days: 1 });
    const refused = expectKind(await init(expired, "certonly"), "refused");
    expect(refused.message).toContain("expired on");
    expect(stats.failures.get("cert_expired")).toBe(1);
    const noEku = expectKind(await init(presented({ commonName: "carol", extKeyUsage: [] }), "certonly"), "refused");
    expect(noEku.message).toContain("lacks clientAuth");
    const foreign = issueClientCertificate({ ca: otherCa, commonName: "carol", days: 30 });
    const untrusted = verifyClientCertificate([new Uint8Array(new X509Certificate(foreign.certPem).raw)], trust);
    expect(expectKind(await init(untrusted, "certonly"), "refused").message).toContain("does not chain to a configured client CA");
  });

  test("no certificate for a certificate-only group: refused with a hint", async () => {
    const { init } = await fixture();
    expect(expectKind(await init(undefined, "certonly"), "refused").message).toContain("none was presented");
  });

  test("a bad certificate falls back to the password form with the error when a password login is allowed", async () => {
    const { init, answer } = await fixture();
    const expired = presented({ commonName: "alice", notBefore: new Date(Date.now() - 10 * 86_400_000), days: 1 });
    const form = expectKind(await init(expired), "form");
    expect(form.form.authId).toBe("main");
    expect(form.form.error).toContain("expired on");
    expect(form.form.fields.map((f) => f.name)).toEqual(["username", "password"]);
    const ok = expectKind(await answer(expired, form.contextId, { username: "alice", password: "pw-alice" }), "success");
    expect(ok.session.user).toBe("alice");
  });

  test("a user without a password still logs in with a password when no certificate is sent", async () => {
    const { init, answer } = await fixture();
    const form = expectKind(await init(undefined), "form");
    expect(form.form.fields.map((f) => f.name)).toEqual(["username", "password"]);
    expect(expectKind(await answer(undefined, form.contextId, { username: "alice", password: "pw-alice" }), "success").session.group).toBe("staff");
  });

  test("a certificate naming no user, or a disabled one, is refused", async () => {
    const { init } = await fixture();
    expect(expectKind(await init(presented({ commonName: "zed" }), "certonly"), "refused").message).toContain("no user named zed");
    expect(expectKind(await init(presented({ commonName: "mallory" }), "certonly"), "refused").message).toContain("disabled");
  });

  test("the user-name attribute is configurable: uid, san-email", async () => {
    const byUid = await fixture("uid");
    expect(expectKind(await byUid.init(presented({ commonName: "Carol Example", uid: "carol" })), "success").session.user).toBe("carol");
    expect(expectKind(await byUid.init(presented({ commonName: "carol" }), "certonly"), "refused").message).toContain("has no subject UID");
    const byMail = await fixture("san-email");
    expect(expectKind(await byMail.init(presented({ commonName: "Frank", email: "Frank@Example.com" })), "success").session.user).toBe("frank@example.com");
  });
});

describe("CertificateStep: groups", () => {
  test("a certificate user asking for a group they are not in is refused once (no loop)", async () => {
    const { init } = await fixture();
    expect(expectKind(await init(presented({ commonName: "carol" }), "certpw"), "refused").message).toContain("You are not a member of group certpw");
  });

  test("a valid certificate of a password-only user: the password form, as without a certificate", async () => {
    const { init, answer } = await fixture();
    const cert = presented({ commonName: "alice" });
    const form = expectKind(await init(cert), "form");
    expect(form.form.error).toBeUndefined();
    expect(expectKind(await answer(cert, form.contextId, { username: "alice", password: "pw-alice" }), "success").session.user).toBe("alice");
  });

  test("a certificate user whose group takes no certificate and no password is refused", async () => {
    const { init } = await fixture();
    expect(expectKind(await init(presented({ commonName: "grace" })), "refused").message).toContain("does not accept a certificate login");
  });
});
