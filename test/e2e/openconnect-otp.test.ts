/**
 * password+otp end to end: a group requiring both, users enrolled through the CLI, Debian's
 * openconnect filling the challenge with --token-mode=totp (or a fixed code via -F), and the
 * spec's literal challenge document read by a TypeScript client. Once in one process and once
 * through `--workers 2`, where a worker carries the forms and the main process checks the codes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseXml, XmlElement } from "@rgrove/parse-xml";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { base32Decode, base32Encode, generateTotpSecret, totpCode } from "../../src/control/auth/totp.ts";
import { gwCli, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { scriptEnv, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

for (const { tag, flags, label } of [
  { tag: "o", flags: [] as string[], label: "one process" },
  { tag: "ow", flags: ["--workers", "2"], label: "--workers 2" },
]) describe.skipIf(!e2eAvailable())(`password+otp against gw (${label})`, () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  const secrets = new Map<string, string>();
  const run = (ns: string, argv: string[], timeout = 60_000) =>
    execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
  const stateDir = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const code = (user: string, at = Date.now()) => {
    const secret = base32Decode(secrets.get(user)!);
    if (!secret.ok) throw secret.error;
    return totpCode(secret.value, at);
  };

  beforeAll(async () => {
    topology = createTopology(tag);
    procs = new ProcessGroup();
    work = tempDir(`otp-${tag}`);
    const dataDir = join(work, "data");
    const cli = (args: string[], input?: string) => {
      const r = gwCli("sources", [...args, "--data-dir", dataDir], input);
      if (r.code !== 0) throw new Error(`gw ${args.join(" ")} failed: ${r.stderr}`);
      return r.stdout;
    };
    cli(["init"]); // the CLI never creates a data directory
    cli(["group", "add", "secure", "--route", "198.51.100.0/24", "--auth", "password+otp"]);
    for (const user of ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]) cli(["user", "add", user, "--group", "secure", "--password-stdin"], `${user}-pass\n`);
    // alice the human way (URI, secret and QR on stdout); the others as JSON.
    const printed = cli(["user", "otp", "enroll", "alice"]);
    const uri = printed.split("\n")[0]!;
    expect(uri).toStartWith("otpauth://totp/gw:alice?secret=");
    secrets.set("alice", new URL(uri).searchParams.get("secret")!);
    expect(printed).toContain(`secret: ${secrets.get("alice")}`);
    expect(printed).toContain("█");
    for (const user of ["bob", "carol", "dave", "frank", "gina"]) secrets.set(user, JSON.parse(cli(["user", "otp", "enroll", user, "--json"])).secret);
    gw = await startGw("sources", topology, procs, dataDir, flags);
    if (flags.includes("--workers")) expect(gw.process.stderr()).toContain("2 worker processes");
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("openconnect --token-mode=totp answers the challenge, logs in and pings the lan host", async () => {
    const state = stateDir("alice");
    const oc = startOpenconnect(topology, procs, {
      user: "alice",
      password: "alice-pass",
      pin: gw.pin,
      stateDir: state,
      flags: ["--no-dtls", "--token-mode=totp", `--token-secret=base32:${secrets.get("alice")}`],
    });
    const env = await waitForScript(state, "connect");
    expect(env.get("INTERNAL_IP4_ADDRESS")).toMatch(/^10\.10\.0\.\d+$/);
    expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
    expect(gw.process.stderr()).toMatch(/login ok user=alice group=secure/);
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 60_000);

  test("a wrong code (wrong secret) is refused with the challenge's error; no tunnel", async () => {
    const state = stateDir("dave");
    const oc = startOpenconnect(topology, procs, {
      user: "dave",
      password: "dave-pass",
      pin: gw.pin,
      stateDir: state,
      interface: "oc1",
      flags: ["--no-dtls", "--token-mode=totp", `--token-secret=base32:${base32Encode(generateTotpSecret())}`],
    });
    expect(await oc.exited).not.toBe(0);
    expect(oc.stderr() + oc.stdout()).toContain("Wrong code: check your authenticator app");
    expect(scriptEnv(state, "connect")).toBeUndefined();
    expect(gw.process.stderr()).toMatch(/login failed reason=otp_wrong user=dave/);
  }, 60_000);

  test("a code is accepted once: the same code typed for a second login is refused as reused", async () => {
    const fixed = code("bob");
    const first = stateDir("bob1");
    const oc = startOpenconnect(topology, procs, { user: "bob", password: "bob-pass", pin: gw.pin, stateDir: first, interface: "oc2", flags: ["--no-dtls", "-F", `challenge:otp=${fixed}`] });
    await waitForScript(first, "connect");
    oc.child.kill("SIGINT");
    await oc.exited;

    const second = stateDir("bob2");
    const again = startOpenconnect(topology, procs, { user: "bob", password: "bob-pass", pin: gw.pin, stateDir: second, interface: "oc3", flags: ["--no-dtls", "-F", `challenge:otp=${fixed}`] });
    expect(await again.exited).not.toBe(0);
    expect(again.stderr() + again.stdout()).toContain("This code was already used: wait for the next one.");
    expect(scriptEnv(second, "connect")).toBeUndefined();
    expect(gw.process.stderr()).toMatch(/login failed reason=otp_reused user=bob/);
  }, 60_000);

  test("openconnect in the legacy form flow (--no-xmlpost) answers the spec's text challenge with a code", async () => {
    const state = stateDir("frank");
    const oc = startOpenconnect(topology, procs, { user: "frank", password: "frank-pass", pin: gw.pin, stateDir: state, interface: "oc5", flags: ["--no-dtls", "--no-xmlpost", "-F", `challenge:otp=${code("frank")}`] });
    const env = await waitForScript(state, "connect");
    expect(env.get("INTERNAL_IP4_ADDRESS")).toMatch(/^10\.10\.0\.\d+$/);
    expect(gw.process.stderr()).toMatch(/login ok user=frank group=secure/);
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 60_000);

  test("a user of the group without enrolment is refused right after the password, told what to ask for", async () => {
    const state = stateDir("erin");
    const oc = startOpenconnect(topology, procs, { user: "erin", password: "erin-pass", pin: gw.pin, stateDir: state, interface: "oc4", flags: ["--no-dtls"] });
    expect(await oc.exited).not.toBe(0);
    expect(oc.stderr() + oc.stdout()).toContain("User erin is not enrolled for one-time codes: ask your administrator for `gw user otp enroll erin`.");
    expect(scriptEnv(state, "connect")).toBeUndefined();
  }, 60_000);

  test("the spec's literal challenge document, checked field by field, then the code, success and a tunnel", () => {
    const out = run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/spec-otp-client.ts"), topology.gatewayOutside, "carol", "carol-pass", "secure", secrets.get("carol")!, "gina", "gina-pass", secrets.get("gina")!], 30_000);
    const r = JSON.parse(out);
    const rootOf = (xml: string) => parseXml(xml).root!;
    const elements = (el: XmlElement) => el.children.filter((c): c is XmlElement => c instanceof XmlElement);

    // 1. <auth id="challenge"> with <message> and <form method="post" action="/auth"> holding
    //    <input type="text" name="otp" label="...">, nothing else.
    expect(r.challengeStatus).toBe("HTTP/1.1 200 OK");
    const challenge = rootOf(r.challengeBody);
    expect(challenge.name).toBe("auth");
    expect(challenge.attributes).toEqual({ id: "challenge" });
    expect(elements(challenge).map((e) => e.name)).toEqual(["message", "form"]);
    const [message, form] = elements(challenge) as [XmlElement, XmlElement];
    expect(message.text).toBe("Enter the code from your authenticator app.");
    expect(form.attributes).toEqual({ method: "post", action: "/auth" });
    expect(elements(form).map((e) => e.name)).toEqual(["input"]);
    expect(elements(form)[0]!.attributes).toEqual({ type: "text", name: "otp", label: "One-time code:" });
    expect(r.challengeCookies.some((c: string) => /^webvpncontext=[^;]+; Secure; HttpOnly$/.test(c))).toBe(true);
    expect(r.challengeCookies.some((c: string) => c.startsWith("webvpn="))).toBe(false);

    // 2. A wrong code: the same document, the error leading the message.
    const wrong = rootOf(r.wrongBody);
    expect(wrong.attributes).toEqual({ id: "challenge" });
    expect(elements(wrong).map((e) => e.name)).toEqual(["message", "form"]);
    expect(elements(wrong)[0]!.text).toBe("Wrong code: check your authenticator app (and its clock) and try again. Enter the code from your authenticator app.");

    // 3. The right code: <auth id="success"> with session-token and config-hash, and the cookie.
    expect(r.successStatus).toBe("HTTP/1.1 200 OK");
    const success = rootOf(r.successBody);
    expect(success.name).toBe("auth");
    expect(success.attributes).toEqual({ id: "success" });
    const field = (name: string) => elements(success).find((e) => e.name === name)?.text;
    expect(field("session-token")).toBe(r.token);
    expect(r.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(field("config-hash")).toMatch(/^[0-9a-f]{64}$/);
    expect(r.successCookies).toContain(`webvpn=${r.token}; Secure; HttpOnly`);

    // 4. The cookie opens a tunnel.
    expect(r.connectStatus).toBe("HTTP/1.1 200 CONNECTED");

    // 5. The same code in a new login: refused as reused.
    expect(rootOf(r.replayBody).attributes).toEqual({ id: "challenge" });
    expect(elements(rootOf(r.replayBody))[0]!.text).toStartWith("This code was already used: wait for the next one.");

    // 6. A client that never sends cookies back but keeps its connection: the login continues.
    const [password, answer] = r.oneConnection as { status: string; body: string; cookies: string[] }[];
    expect(rootOf(password!.body).attributes).toEqual({ id: "challenge" });
    expect(answer!.status).toBe("HTTP/1.1 200 OK");
    expect(rootOf(answer!.body).attributes).toEqual({ id: "success" });
    expect(answer!.cookies.some((c) => c.startsWith("webvpn="))).toBe(true);
  }, 60_000);
});
