import { describe, expect, test } from "bun:test";
import { compilePolicy, emptyPolicy } from "../../../src/control/group-policy.ts";
import { SessionRegistry, type Session } from "../../../src/control/sessions.ts";
import { ok } from "../../../src/errors.ts";
import { AddressPool } from "../../../src/net/address-pool.ts";
import { AddressPool6 } from "../../../src/net/address-pool6.ts";
import { formatIpv6, parseIpv6Cidr } from "../../../src/net/ipv6.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { parseCidr } from "../../../src/net/ipv4.ts";
import type { ChildHandle, ProcessExit, SpawnSpec } from "../../../src/runtime/worker-process.ts";
import type { WorkerKernel } from "../../../src/runtime/worker-kernel.ts";
import { SessionWorkers } from "../../../src/serve/session-workers.ts";
import { connectionView } from "../../../src/control/connections.ts";
import type { LoginRequest } from "../../../src/control/auth/login-flow.ts";
import type { HttpRequest } from "../../../src/front/http-head.ts";
import type { ResponseSpec } from "../../../src/front/http-response.ts";

/** A worker process as the main process sees it, driven by the test: what it was sent, and its side of the channel. */
class FakeWorker implements ChildHandle {
  readonly sent: any[] = [];
  private listeners: ((m: unknown) => void)[] = [];
  private exits: ((e: ProcessExit) => void)[] = [];
  constructor(readonly pid: number, readonly spec: SpawnSpec) {}
  // Arrow properties: the supervisor passes these on unbound, as it may a real handle's.
  send = (message: unknown): boolean => {
    this.sent.push(message);
    // A started worker answers its start at once.
    const m = message as { kind: string; op?: string; id?: number };
    if (m.kind === "request" && m.op === "start") queueMicrotask(() => this.receive({ kind: "answer", id: m.id, body: { udpPort: null } }));
    if (m.kind === "request" && m.op === "stop") queueMicrotask(() => this.receive({ kind: "answer", id: m.id, body: { ended: 0 } }));
    return true;
  };
  onMessage = (listener: (m: unknown) => void): void => {
    this.listeners.push(listener);
  };
  onExit = (listener: (e: ProcessExit) => void): void => {
    this.exits.push(listener);
  };
  kill = (signal: "SIGTERM" | "SIGKILL"): boolean => {
    this.exit({ code: null, signal });
    return true;
  };
  receive(message: unknown): void {
    for (const l of this.listeners) l(message);
  }
  note(op: string, body: unknown): void {
    this.receive({ kind: "note", op, body });
  }
  exit(e: ProcessExit): void {
    for (const l of this.exits.splice(0)) l(e);
  }
  notes(op: string): unknown[] {
    return this.sent.filter((m) => m.kind === "note" && m.op === op).map((m) => m.body);
  }
}

function setup(o: { pool6?: string; clientCa?: { caPem: string; crlPem?: string }; samlPages?: (request: HttpRequest) => Promise<ResponseSpec>; onTunLost?: (why: string) => void } = {}) {
  const now = () => 1_000_000;
  const sessions = new SessionRegistry(300_000, now);
  const cidr = parseCidr("10.10.0.0/24");
  if (!cidr.ok) throw cidr.error;
  const pool = new AddressPool(cidr.value);
  const placed = new Map<number, number>();
  /** IPv6 placements by the address's text. */
  const placed6 = new Map<string, number>();
  const cidr6 = o.pool6 === undefined ? undefined : parseIpv6Cidr(o.pool6);
  if (cidr6 && !cidr6.ok) throw cidr6.error;
  const pool6 = cidr6 && new AddressPool6(cidr6.value);
  const kernel: WorkerKernel = {
    tcpPort: 443,
    udpPort: undefined,
    tcp: [30, 31],
    udp: undefined,
    tun: { name: "gw0", mtu: 1400, vnetHeader: true, fds: [40, 41] },
    place: (address, worker) => (typeof address === "number" ? placed.set(address, worker) : placed6.set(formatIpv6(address), worker), ok(undefined)),
    remove: (address) => (typeof address === "number" ? placed.delete(address) : placed6.delete(formatIpv6(address)), ok(undefined)),
    restoreNonBlocking: () => ok(undefined),
    close: () => {},
  };
  const workers: FakeWorker[] = [];
  /** What the login flow was asked. */
  const logins: LoginRequest[] = [];
  let pid = 100;
  const drops = new DropCounters();
  const logs: string[] = [];
  const sw = new SessionWorkers({
    kernel,
    spawn: (spec) => {
      const w = new FakeWorker(pid++, spec);
      workers[Number(spec.argv[spec.argv.indexOf("tunnel") + 1])] = w;
      queueMicrotask(() => w.receive({ kind: "ready" }));
      return ok(w);
    },
    selfArgv: ["gw"],
    sessions,
    pool,
    pool6,
    flow: { handle: async (request: LoginRequest) => (logins.push(request), { kind: "refused", message: "no" }) } as never,
    policySource: { policyOf: () => compilePolicy(emptyPolicy), groupRuleCount: () => 0 },
    defaults: () => ({ mtu: 1400, dpdSeconds: 30, keepaliveSeconds: 20, mobileDpdSeconds: 600, poolPrefixLength: 24, serverName: "gw" }),
    start: { certPem: "c", keyPem: "k", pool: cidr.value, maxOpen: 100, unauthenticated: 10, tlsRecordBatching: true, tlsRecordReading: true, ...(o.clientCa && { clientCa: o.clientCa }) },
    now,
    log: (line) => logs.push(String(line)),
    logFormat: "text",
    drops,
    onDropNotice: () => {},
    ...(o.samlPages && { samlPages: o.samlPages }),
    ...(o.onTunLost && { onTunLost: o.onTunLost }),
  });
  const login = () => {
    const { session, token } = sessions.create({ user: "dave", group: "staff", policy: compilePolicy(emptyPolicy), configHash: "h" });
    return { session, token };
  };
  const info = (clientAddress: string) => ({ clientAddress, clientPort: 5000, userAgent: "OpenConnect", hostname: "h", connectedAt: 1, channel: "cstp" as const, cipher: "TLS", mtu: 1400 });
  /** The CONNECT a worker asks for, as its request envelope; resolves with the main process's answer. */
  const connect = async (worker: number, token: string, headers: [string, string][] = []) => {
    const w = workers[worker]!;
    const id = 1000 + w.sent.length;
    w.receive({ kind: "request", id, op: "connect", body: { headers: [["Cookie", `webvpn=${token}`], ...headers], clientIp: "203.0.113.9" } });
    await new Promise((r) => setTimeout(r, 0));
    return w.sent.find((m) => m.kind === "answer" && m.id === id)?.body;
  };
  return { sw, sessions, pool, pool6, placed, placed6, workers, drops, logs, logins, login, info, connect };
}

describe("SessionWorkers: the main process's account of sessions carried by workers", () => {
  test("start waits for every worker to take its settings; each gets its descriptors in order and the log format", async () => {
    const t = setup();
    expect(await t.sw.start()).toEqual(ok(undefined));
    expect(t.workers.map((w) => w.spec.fds)).toEqual([[30, 40], [31, 41]]);
    expect(t.workers[0]!.spec.env).toEqual({ GW_WORKER_LOG_FORMAT: "text" });
    expect(t.workers[1]!.sent.find((m) => m.op === "start")?.body).toMatchObject({ certPem: "c", tun: { name: "gw0", vnetHeader: true }, dtls: false });
  });

  test("a CONNECT is granted with the session's snapshot, and its address is placed on the asking worker's queue", async () => {
    const t = setup();
    await t.sw.start();
    const { session, token } = t.login();
    const answer = (await t.connect(1, token)) as { kind: string; session: { id: string; address: number } };
    expect(answer.kind).toBe("grant");
    expect(answer.session.id).toBe(session.id);
    expect(answer.session.address).toBe(session.address!);
    expect(t.placed.get(session.address!)).toBe(1);
    const refused = (await t.connect(0, "not-a-cookie")) as { kind: string; response: { status: number } };
    expect(refused).toMatchObject({ kind: "refuse", response: { status: 401 } });
  });

  test("with an IPv6 pool: a CONNECT that takes IPv6 carries the session's lease to the worker, placed beside the IPv4 address; the end returns both", async () => {
    const t = setup({ pool6: "2001:db8:10::/64" });
    await t.sw.start();
    expect(t.workers[0]!.sent.find((m) => m.op === "start")?.body).toMatchObject({ pool6: { network: [0x20010db8, 0x100000, 0, 0], prefixLength: 64 } });
    // openconnect --disable-ipv6 says IPv4 only: no lease, nothing placed.
    const v4only = t.login();
    const plain = (await t.connect(0, v4only.token, [["X-CSTP-Address-Type", "IPv4"]])) as { session: { address6?: number[] } };
    expect(plain.session.address6).toBeUndefined();
    expect(v4only.session.address6).toBeUndefined();
    expect(t.placed6.size).toBe(0);
    // openconnect's usual CONNECT takes both; a reconnect through the other worker keeps the lease and moves it.
    const { session, token } = t.login();
    const first = (await t.connect(1, token, [["X-CSTP-Address-Type", "IPv6,IPv4"]])) as { session: { address6?: number[] } };
    expect(first.session.address6).toEqual([0x20010db8, 0x100000, 0, 2]);
    expect(formatIpv6(session.address6!)).toBe("2001:db8:10::2");
    expect(t.placed6.get("2001:db8:10::2")).toBe(1);
    const again = (await t.connect(0, token, [["X-CSTP-Address-Type", "IPv6,IPv4"]])) as { session: { address6?: number[] } };
    expect(again.session.address6).toEqual([0x20010db8, 0x100000, 0, 2]);
    expect(t.placed6.get("2001:db8:10::2")).toBe(0);
    expect(t.pool6!.used).toBe(1);
    t.sessions.end(session, "admin");
    expect(t.placed6.size).toBe(0);
    expect(t.pool6!.used).toBe(0);
  });

  test("a full IPv6 pool: the CONNECT is granted without IPv6 and the log says why", async () => {
    const t = setup({ pool6: "2001:db8:10::/126" }); // two addresses for clients
    await t.sw.start();
    for (const earlier of [t.login(), t.login()]) await t.connect(0, earlier.token);
    const third = t.login();
    const answer = (await t.connect(0, third.token)) as { kind: string; session: { address6?: number[] } };
    expect(answer.kind).toBe("grant");
    expect(answer.session.address6).toBeUndefined();
    expect(t.logs.some((l) => l.includes(`tunnel without IPv6 session=${third.session.id}`))).toBe(true);
  });

  test("with a client CA: each worker is given it, a login carries the worker's verdict on the certificate to the login flow, a reload's CA reaches every worker", async () => {
    const t = setup({ clientCa: { caPem: "CA1", crlPem: "CRL1" } });
    await t.sw.start();
    expect(t.workers[1]!.sent.find((m) => m.op === "start")?.body).toMatchObject({ clientCa: { caPem: "CA1", crlPem: "CRL1" } });
    const login = async (certificate: unknown) => {
      const w = t.workers[0]!;
      const id = 2000 + w.sent.length;
      w.receive({ kind: "request", id, op: "login", body: { kind: "init", answers: [], client: { peer: "203.0.113.9:5000", ip: "203.0.113.9", capabilities: [], certificate } } });
      await new Promise((r) => setTimeout(r, 0));
      return t.logins.at(-1)!.client.certificate;
    };
    const checked = await login({ ok: true, subjectCN: "carol", emails: [], dnsNames: [], serial: "0A", subject: "CN=carol", issuer: "CN=CA", notAfter: "2027-01-01T00:00:00.000Z" });
    expect(checked).toEqual(ok({ subjectCN: "carol", emails: [], dnsNames: [], serial: "0A", subject: "CN=carol", issuer: "CN=CA", notAfter: new Date("2027-01-01T00:00:00.000Z") }));
    const refused = await login({ ok: false, code: "cert_revoked", message: "revoked" });
    expect(refused?.ok === false && refused.error.code).toBe("cert_revoked");
    t.sw.setCertificate("c2", "k2", { caPem: "CA2" });
    for (const w of t.workers) expect(w.notes("certificate")).toEqual([{ certPem: "c2", keyPem: "k2", clientCa: { caPem: "CA2" } }]);
  });

  test("with SAML: workers are told to pass SAML's pages on, and a page request is answered by the service provider here", async () => {
    const asked: HttpRequest[] = [];
    const t = setup({
      samlPages: async (request) => {
        asked.push(request);
        return { status: 302, reason: "Found", headers: [["Location", "https://vpn.example/+CSCOE+/saml_ac_login.html"]], body: new TextEncoder().encode("") };
      },
    });
    await t.sw.start();
    expect(t.workers[0]!.sent.find((m) => m.op === "start")?.body.saml).toBe(true);
    const w = t.workers[1]!;
    const form = "SAMLResponse=PHNhbWw%2B&RelayState=r1";
    w.receive({ kind: "request", id: 3000, op: "samlPage", body: { method: "POST", target: "/+CSCOE+/saml/sp/acs", headers: [["Content-Type", "application/x-www-form-urlencoded"]], body: Buffer.from(form).toString("base64") } });
    await new Promise((r) => setTimeout(r, 0));
    expect(new TextDecoder().decode(asked[0]!.body)).toBe(form);
    expect(asked[0]!.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(w.sent.find((m) => m.kind === "answer" && m.id === 3000)?.body).toEqual({ status: 302, reason: "Found", headers: [["Location", "https://vpn.example/+CSCOE+/saml_ac_login.html"]], body: "" });
  });

  test("without SAML a worker is not told to pass pages on, and a page request is refused", async () => {
    const t = setup();
    await t.sw.start();
    expect(t.workers[0]!.sent.find((m) => m.op === "start")?.body.saml).toBeUndefined();
    const w = t.workers[0]!;
    w.receive({ kind: "request", id: 3001, op: "samlPage", body: { method: "GET", target: "/+CSCOE+/saml/sp/metadata", headers: [], body: "" } });
    await new Promise((r) => setTimeout(r, 0));
    expect(w.sent.find((m) => m.id === 3001)).toMatchObject({ kind: "failure", code: "saml_not_configured" });
  });

  test("without a client CA a reload sends the certificate alone", async () => {
    const t = setup();
    await t.sw.start();
    expect(t.workers[0]!.sent.find((m) => m.op === "start")?.body.clientCa).toBeUndefined();
    t.sw.setCertificate("c2", "k2");
    expect(t.workers[0]!.notes("certificate")).toEqual([{ certPem: "c2", keyPem: "k2" }]);
  });

  test("a session coming back through another worker: the old one is told to let go, the new one holds it", async () => {
    const t = setup();
    await t.sw.start();
    const { session, token } = t.login();
    await t.connect(0, token);
    t.workers[0]!.note("attached", { sessionId: session.id, connection: 1, info: t.info("203.0.113.9") });
    expect(session.connection?.info.clientAddress).toBe("203.0.113.9");
    await t.connect(1, token);
    t.workers[1]!.note("attached", { sessionId: session.id, connection: 7, info: t.info("203.0.113.77") });
    expect(t.workers[0]!.notes("end")).toEqual([{ sessionId: session.id, reason: "replaced" }]);
    expect(session.connection?.info.clientAddress).toBe("203.0.113.77");
    // The old worker's late report of its connection going away changes nothing now.
    t.workers[0]!.note("detached", { sessionId: session.id, connection: 1 });
    t.workers[0]!.note("ended", { sessionId: session.id, reason: "logout" });
    expect(session.connection).toBeDefined();
    expect(session.ended).toBe(false);
  });

  test("a session's end in the registry reaches its worker, takes its address back and out of the steering", async () => {
    const t = setup();
    await t.sw.start();
    const { session, token } = t.login();
    await t.connect(1, token);
    t.workers[1]!.note("attached", { sessionId: session.id, connection: 1, info: t.info("203.0.113.9") });
    const address = session.address!;
    t.sessions.end(session, "admin");
    expect(t.workers[1]!.notes("end")).toEqual([{ sessionId: session.id, reason: "admin" }]);
    expect(t.placed.has(address)).toBe(false);
    expect(t.pool.leaseExact(address)).toBe(true); // free again
  });

  test("a logout reported by the holder ends the session; a lost connection leaves it waiting for its client", async () => {
    const t = setup();
    await t.sw.start();
    const a = t.login();
    const b = t.login();
    for (const s of [a, b]) await t.connect(0, s.token);
    t.workers[0]!.note("attached", { sessionId: a.session.id, connection: 1, info: t.info("203.0.113.9") });
    t.workers[0]!.note("attached", { sessionId: b.session.id, connection: 2, info: t.info("203.0.113.9") });
    t.workers[0]!.note("ended", { sessionId: a.session.id, reason: "logout" });
    t.workers[0]!.note("detached", { sessionId: b.session.id, connection: 2 });
    expect(a.session.ended).toBe(true);
    expect(b.session.ended).toBe(false);
    expect(b.session.connection).toBeUndefined();
  });

  test("a worker whose TUN queue is lost says so, and the main process hears which worker and why", async () => {
    const lost: string[] = [];
    const t = setup({ onTunLost: (why) => lost.push(why) });
    await t.sw.start();
    t.workers[1]!.note("tunLost", { why: "device reported poll events 0x8" });
    expect(lost).toEqual(["worker 1: device reported poll events 0x8"]);
    await t.sw.stop();
  });

  test("a worker that dies leaves its sessions waiting for their clients (detached), not connected for ever", async () => {
    const t = setup();
    await t.sw.start();
    const { session, token } = t.login();
    await t.connect(1, token);
    t.workers[1]!.note("attached", { sessionId: session.id, connection: 1, info: t.info("203.0.113.9") });
    t.workers[1]!.exit({ code: null, signal: "SIGKILL" });
    expect(session.connection).toBeUndefined();
    expect(session.ended).toBe(false);
    await t.sw.stop();
  });

  test("counts and counters: a worker's traffic is added to the session; drop totals of all workers are summed", async () => {
    const t = setup();
    await t.sw.start();
    const { session, token } = t.login();
    await t.connect(0, token);
    t.workers[0]!.note("traffic", { counts: [[session.id, 3, 4, 300, 400]] });
    t.workers[0]!.note("traffic", { counts: [[session.id, 1, 0, 100, 0]] });
    expect([session.traffic.packetsIn, session.traffic.bytesIn, session.traffic.bytesOut]).toEqual([4, 400, 400]);
    const counters = (noRoute: number) => ({ drops: [["no_route", noRoute]], rules: [["staff", [[0, 2]]]], refused: [["per_address_limit", 1]], timedOut: [], unauthenticated: 3 });
    t.workers[0]!.note("counters", counters(5));
    t.workers[1]!.note("counters", counters(7));
    t.workers[1]!.note("counters", counters(8)); // totals, not increments: the last report counts
    expect(t.drops.get("no_route")).toBe(13);
    expect(t.drops.ruleCounts("staff").get(0)).toBe(4);
    expect(t.sw.frontStats()).toEqual({ unauthenticated: 6, refused: { per_address_limit: 2 }, timedOut: {} });
  });

  test("a worker's firewall report: the connection view shows the session's rate caps and policy drops, and the next report replaces them", async () => {
    const t = setup();
    await t.sw.start();
    const { session, token } = t.login();
    await t.connect(0, token);
    expect(connectionView(session)).toMatchObject({ rateUp: null, rateDown: null, drops: {} });
    t.workers[0]!.note("firewall", { sessions: [[session.id, 20_000_000, null, { policy_denied: 3, rate_limited_up: 0 }], ["0123456789abcdef", 1, 1, {}]] });
    expect(connectionView(session)).toMatchObject({ rateUp: 20_000_000, rateDown: null, drops: { policy_denied: 3, rate_limited_up: 0 } });
    expect(session.firewall!.dropTotal()).toBe(3);
    t.workers[0]!.note("firewall", { sessions: [[session.id, null, 5_000_000, { policy_denied: 4 }]] });
    expect(connectionView(session)).toMatchObject({ rateUp: null, rateDown: 5_000_000, drops: { policy_denied: 4 } });
    // A negative count is not a count: the note is dropped, the view stays.
    t.workers[0]!.note("firewall", { sessions: [[session.id, null, null, { policy_denied: -1 }]] });
    expect(connectionView(session)).toMatchObject({ rateDown: 5_000_000, drops: { policy_denied: 4 } });
  });

  test("a malformed note from a worker is dropped and logged; the channel keeps working", async () => {
    const t = setup();
    await t.sw.start();
    t.workers[0]!.note("traffic", { counts: "lots" });
    expect(t.logs.some((l) => l.includes("dropped"))).toBe(true);
    const { token } = t.login();
    expect(((await t.connect(0, token)) as { kind: string }).kind).toBe("grant");
  });
});
