/**
 * Issue 8, "Keep them closed": a real openconnect user keeps pinging the LAN over DTLS while an
 * attacker in the same client network throws everything it has at the gateway for about 20 s:
 * malformed HTTP, slow and truncated TLS handshakes, a slowloris header, 4 MiB of pipelined
 * requests never read, hostile XML, forged cookies, a logged-in user sending junk CSTP, forged
 * DTLS records from the victim's own IP (session hijack by rebinding), a UDP flood and hostile
 * management-API requests. The gateway must keep the victim's traffic flowing on its DTLS
 * channel, stay alive within bounded memory, give its descriptors back, keep answering its API
 * and lose nothing stored. Attack code: fixtures/hostile-*.ts, run inside the client namespace.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { DTLS_UP_LINE, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup, type Started } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const ATTACKER = "203.0.113.3";
/**
 * The held connections come from a second attacker address: they fill that address's share of
 * unauthenticated connections (the gateway then resets new ones from it), and the malformed
 * requests from ATTACKER must still reach the parser to test it.
 */
const SLOW_ATTACKER = "203.0.113.4";
const VICTIM = "203.0.113.2";
const API = "203.0.113.1:8443";
/** How long the held connections (slow handshakes, slowloris, unread pipeline) stay open. */
const ATTACK_SECONDS = 20;
/** The hijack attempt: forged DTLS records for this long, early in the attack. */
const HIJACK_SECONDS = 8;
const FLOOD_DATAGRAMS = 50_000;
/** The victim's ping: every 0.2 s, across the whole attack and a little after. */
const PINGS = 150;
const MAX_LOSS = 0.05;
/**
 * Memory bound: what this attack may legitimately hold at once is a few hundred TLS connections
 * (OpenSSL buffers, 16 KiB head buffers: tens of MiB), a handful of 64 KiB bodies in flight and
 * the API's refused bodies, plus the runtime's heap growth under churn. 150 MiB above the start
 * leaves room for that and still catches a gateway that queues the answers to 4 MiB of unread
 * pipelined requests (over 100k responses) or keeps huge bodies around.
 */
const RSS_HEADROOM_KIB = 150 * 1024;
/** Descriptors "back near the start": the victim's connection persists; allow a little slack. */
const FD_SLACK = 10;

const MIB = 1024;
/** Diagnosis only: GW_HOSTILE_SKIP=slow,flood leaves those attacks out (the test then fails on purpose). */
const skipped = new Set((process.env.GW_HOSTILE_SKIP ?? "").split(",").filter(Boolean));

describe.skipIf(!e2eAvailable())("hostile input against gw while a user works", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let token: string;

  const fixture = (name: string) => join(repoRoot, "test/e2e/fixtures", name);
  const inClient = (argv: string[]) => procs.start([...topology.exec(topology.client), ...argv]);
  const bunInClient = (file: string, args: string[]) => inClient([process.execPath, fixture(file), ...args]);
  const proc = (pid: number, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
  const lastJson = (p: Started, what: string) => {
    const line = p.stdout().trim().split("\n").at(-1) ?? "";
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`${what} printed no result (exit ${p.child.exitCode ?? p.child.signalCode}):\n--- stdout\n${p.stdout().slice(-2000)}\n--- stderr\n${p.stderr().slice(-2000)}`);
    }
  };
  const apiCheck = async () => {
    const p = bunInClient("hostile-api.ts", ["check", API, ATTACKER, token]);
    await p.exited;
    return lastJson(p, "the API check");
  };
  /** What must survive: user names with their groups and state, group names with their policies. */
  const stored = (check: { users: { body: { name: string; groups: string[]; disabled: boolean }[] }; groups: { body: { name: string; policy: unknown }[] } }) => ({
    users: Array.isArray(check.users.body) ? check.users.body.map((u) => ({ name: u.name, groups: u.groups, disabled: u.disabled })) : check.users.body,
    groups: Array.isArray(check.groups.body) ? check.groups.body.map((g) => ({ name: g.name, policy: g.policy })) : check.groups.body,
  });

  beforeAll(async () => {
    topology = createTopology("h");
    procs = new ProcessGroup();
    work = tempDir("hostile");
    const dataDir = join(work, "data");
    for (const address of [ATTACKER, SLOW_ATTACKER]) execFileSync("ip", ["-n", topology.client, "addr", "add", `${address}/24`, "dev", topology.clientInterface]);
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["group", "add", "ops", "--route", "198.51.100.0/24", "--dns", "198.51.100.53"]],
      [["user", "add", "victim", "--group", "staff", "--password-stdin"], "victim-pass-1\n"],
      [["user", "add", "mallory", "--group", "ops", "--password-stdin"], "mallory-pass-2\n"],
      [["user", "add", "carol", "--group", "staff", "--group", "ops", "--password-stdin"], "carol-pass-3\n"],
    ]);
    // Our own admin token, so the test does not depend on the first-start token being printed.
    const created = gwCli("sources", ["token", "create", "hostile-test", "--scope", "admin", "--data-dir", dataDir]);
    if (created.code !== 0) throw new Error(`gw token create failed: ${created.stderr}`);
    token = created.stdout.trim();
    gw = await startGw("sources", topology, procs, dataDir, ["--api-listen", API]);
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the victim keeps its DTLS tunnel, the gateway its memory, descriptors, API and store", async () => {
    const pid = gw.process.child.pid!;
    // `ip netns exec` execs the command: the PID we started is the gateway's own.
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("serve");

    // ── the victim: openconnect over DTLS ──
    const state = join(work, "victim");
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "victim", password: "victim-pass-1", pin: gw.pin, stateDir: state, flags: ["--authgroup", "staff"] });
    const ocOutput = () => `\n--- openconnect\n${(oc.stdout() + oc.stderr()).slice(-3000)}\n--- gateway\n${gw.process.stderr().slice(-3000)}`;
    await waitForScript(state, "connect").catch((e) => {
      throw new Error(`the victim could not connect: ${e.message}${ocOutput()}`);
    });
    await oc.waitFor(DTLS_UP_LINE, 15_000).catch((e) => {
      throw new Error(`the victim's DTLS channel never came up: ${e.message.split("\n")[0]}${ocOutput()}`);
    });
    const dtlsUp = /dtls up session=(\S+) user=victim peer=(\S+) /;
    await gw.process.waitFor(dtlsUp);
    const [, victimSession, victimPeer] = dtlsUp.exec(gw.process.stderr())!;

    const before = await apiCheck();
    expect(before.status.code).toBe("200");
    const rssStart = proc(pid, "VmRSS");
    const hwmStart = proc(pid, "VmHWM");
    const fdStart = fds(pid);

    // ── the attack, with the victim pinging through it ──
    const pingStart = Date.now();
    const ping = inClient(["ping", "-n", "-i", "0.2", "-c", String(PINGS), "-W", "2", topology.lanHost]);
    const cstp = bunInClient("hostile-cstp.ts", [topology.gatewayOutside, ATTACKER, "mallory", "mallory-pass-2"]);
    await cstp.waitFor("logged in", 15_000); // before the other attacks can get the attacker banned
    const launch: [string, () => Started][] = [
      ["http", () => bunInClient("hostile-http.ts", [topology.gatewayOutside, ATTACKER, VICTIM])],
      ["slow", () => bunInClient("hostile-slow.ts", [topology.gatewayOutside, SLOW_ATTACKER, String(ATTACK_SECONDS)])],
      ["hijack", () => bunInClient("hostile-udp.ts", ["hijack", topology.gatewayOutside, VICTIM, String(HIJACK_SECONDS)])],
      ["flood", () => bunInClient("hostile-udp.ts", ["flood", topology.gatewayOutside, ATTACKER, String(FLOOD_DATAGRAMS)])],
      ["api", () => bunInClient("hostile-api.ts", ["attack", API, ATTACKER, token])],
    ];
    const attackSeq = Math.round((Date.now() - pingStart) / 200) + 1;
    const attackers: [string, Started][] = [["junk CSTP", cstp], ...launch.filter(([name]) => !skipped.has(name)).map(([name, start]) => [name, start()] as [string, Started])];
    let rssPeak = rssStart;
    let fdPeak = fdStart;
    const sampler = setInterval(() => {
      try {
        rssPeak = Math.max(rssPeak, proc(pid, "VmRSS"));
        fdPeak = Math.max(fdPeak, fds(pid));
      } catch {} // the gateway died: the checks below say so
    }, 250);
    const deadline = new Promise<"late">((r) => setTimeout(() => r("late"), (ATTACK_SECONDS + 25) * 1000));
    const finished = await Promise.race([Promise.all(attackers.map(([, p]) => p.exited)), deadline]);
    if (finished === "late") for (const [, p] of attackers) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    const results = Object.fromEntries(attackers.map(([name, p]) => [name, lastJson(p, `attack ${name}`)]));
    await Promise.race([ping.exited, new Promise((r) => setTimeout(r, 40_000))]);

    // ── afterwards ──
    let fdEnd = fdStart;
    for (let t = 0; t < 60; t++) {
      try {
        fdEnd = fds(pid);
      } catch {
        break;
      }
      if (fdEnd <= fdStart + FD_SLACK) break;
      await Bun.sleep(250);
    }
    clearInterval(sampler);
    const alive = gw.process.child.exitCode === null && gw.process.child.signalCode === null;
    const rssEnd = alive ? proc(pid, "VmRSS") : NaN;
    // The kernel's own peak catches what happened between our samples, once it exceeds the startup peak.
    const hwmEnd = alive ? proc(pid, "VmHWM") : 0;
    const rssHigh = hwmEnd > hwmStart ? hwmEnd : rssPeak;
    const after = alive ? await apiCheck() : undefined;

    const summary = /(\d+) packets transmitted, (\d+) received/.exec(ping.stdout());
    const transmitted = Number(summary?.[1] ?? 0);
    const received = Number(summary?.[2] ?? 0);
    const loss = transmitted ? 1 - received / transmitted : 1;
    const answered = new Set([...ping.stdout().matchAll(/icmp_seq=(\d+)/g)].map((m) => Number(m[1])));
    const lost = Array.from({ length: transmitted }, (_, i) => i + 1).filter((seq) => !answered.has(seq));
    const log = gw.process.stderr();
    const rebounds = log.split("\n").filter((l) => l.includes(`dtls rebound session=${victimSession} `)).length;
    const dtlsDown = log.split("\n").filter((l) => l.includes(`dtls down session=${victimSession} `) || l.includes(`channel session=${victimSession} user=victim downstream=cstp`)).length;

    // ── what was thrown and what was seen ──
    const rows: [string, string][] = [];
    if (skipped.size > 0) rows.push([`SKIPPED (GW_HOSTILE_SKIP): ${[...skipped].join(", ")}`, "this run does not count"]);
    for (const name of ["http", "api"].filter((n) => results[n])) {
      for (const [kind, n] of Object.entries(results[name].thrown as Record<string, number>)) rows.push([`${kind}: ${n}`, JSON.stringify(results[name].outcomes[kind])]);
    }
    const slow = results.slow;
    if (slow) rows.push([`truncated TLS handshakes: ${slow.truncatedHandshakes}`, "(closed by the attacker)"]);
    if (slow) rows.push([`slow TLS handshakes held ${ATTACK_SECONDS} s: ${slow.slowHandshakes.opened}`, `closed by gw before the attacker let go: ${slow.slowHandshakes.closedByGateway}`]);
    if (slow) rows.push([`slowloris header, 1 byte/s: ${slow.slowloris.bytesSent} bytes`, `closed by gw: ${slow.slowloris.closedByGateway}`]);
    if (slow) rows.push([`pipelined GET /nope, never read: ${(slow.pipeline.bytesQueued / 1048576).toFixed(1)} MiB`, `flushed ${(slow.pipeline.bytesFlushed / 1048576).toFixed(1)} MiB, closed by gw: ${slow.pipeline.closedByGateway}`]);
    const junk = Object.entries(results["junk CSTP"].results as Record<string, { connect: string; closedByGateway: boolean }>);
    rows.push([`junk CSTP patterns (user mallory): ${junk.length}`, `CONNECT ${JSON.stringify(junkTally(junk.map(([, r]) => r.connect)))}, tunnel closed by gw: ${junk.filter(([, r]) => r.closedByGateway).length}`]);
    if (results.hijack) rows.push([`forged DTLS records from ${VICTIM} on ${results.hijack.ports} new ports: ${results.hijack.sent}`, `datagrams the forger received (stolen): ${results.hijack.received}; 'dtls rebound' lines for the victim: ${rebounds}`]);
    if (results.flood) rows.push([`random UDP datagrams to 443: ${results.flood.sent}`, ""]);
    rows.push([`victim pings (DTLS, peer ${victimPeer})`, `${received}/${transmitted} answered, loss ${(loss * 100).toFixed(1)} % (lost icmp_seq ${lost.join(",") || "none"}, attacks from icmp_seq ${attackSeq}, 5 a second); DTLS down/CSTP fallback lines: ${dtlsDown}`]);
    rows.push(["gateway RSS", `start ${(rssStart / MIB).toFixed(1)} MiB, peak ${(Math.max(rssPeak, rssHigh) / MIB).toFixed(1)} MiB, end ${(rssEnd / MIB).toFixed(1)} MiB`]);
    rows.push(["gateway descriptors", `start ${fdStart}, peak ${fdPeak}, end ${fdEnd}`]);
    rows.push(["gateway", `${alive ? "alive" : "DEAD"}; API status after: ${after?.status.code ?? "none"}`]);
    const width = Math.max(...rows.map(([a]) => a.length));
    console.log(`\nhostile input: what was thrown, what was seen\n${rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`).join("\n")}\n`);

    // ── the verdict: every failed check, each with what it means ──
    const failures: string[] = [];
    if (!alive) failures.push(`the gateway died during the attack (exit ${gw.process.child.exitCode ?? gw.process.child.signalCode}); its last log lines:\n${log.slice(-2000)}`);
    if (!summary) failures.push(`ping printed no summary:\n${ping.stdout().slice(-1000)}${ping.stderr().slice(-1000)}`);
    else if (loss >= MAX_LOSS) failures.push(`the victim lost ${(loss * 100).toFixed(1)} % of its pings (${received}/${transmitted} answered; at most ${MAX_LOSS * 100} % allowed; lost icmp_seq ${lost.join(",")}, attacks from ${attackSeq}, 5 a second): a forged rebinding sends replies elsewhere, a blocked event loop lets the UDP socket overflow`);
    const stolen = results.hijack?.received ?? 0;
    if (rebounds > 0 || stolen > 0) {
      failures.push(
        `DTLS session hijack: forged records (epoch 1, old sequence numbers, random bodies) from ${VICTIM} on new ports moved the victim's DTLS channel ${rebounds} times ('dtls rebound session=${victimSession}' in the gateway log), and the forger received ${stolen} datagrams meant for the victim; a record must authenticate before it may move a channel`,
      );
    }
    const rssPeakAll = Math.max(rssPeak, rssHigh);
    if (rssPeakAll > rssStart + RSS_HEADROOM_KIB) failures.push(`the gateway's RSS grew from ${(rssStart / MIB).toFixed(1)} MiB to ${(rssPeakAll / MIB).toFixed(1)} MiB (bound: start + ${RSS_HEADROOM_KIB / MIB} MiB): something queues without limit (the unread 4 MiB pipeline's answers are the usual suspect)`);
    if (fdEnd > fdStart + FD_SLACK) failures.push(`the gateway holds ${fdEnd} descriptors 15 s after the attack ended (${fdStart} before it, slack ${FD_SLACK}): connections leak`);
    if (after && after.status.code !== "200") failures.push(`GET /api/v1/status with the admin token answered ${after.status.code} after the attack: ${JSON.stringify(after.status.body).slice(0, 300)}`);
    if (after && JSON.stringify(stored(after)) !== JSON.stringify(stored(before))) {
      failures.push(`what is stored changed during the attack:\n before ${JSON.stringify(stored(before))}\n after  ${JSON.stringify(stored(after))}`);
    }
    if (slow) {
      // The time-outs: the attacker holds each of these for ATTACK_SECONDS, longer than any deadline of the login front.
      const held = slow.slowHandshakes.opened - slow.slowHandshakes.closedByGateway;
      if (held > 0) failures.push(`${held} of ${slow.slowHandshakes.opened} slow TLS handshakes were still open after ${ATTACK_SECONDS} s: handshakes must time out`);
      if (!slow.slowloris.closedByGateway) failures.push(`a request head sent one byte a second was still open after ${ATTACK_SECONDS} s: a head must be complete soon after its first byte`);
      if (!slow.pipeline.closedByGateway) failures.push(`a connection pipelining ${(slow.pipeline.bytesQueued / 1048576).toFixed(1)} MiB of requests without reading answers stayed open: its queue must be capped`);
    }
    if (skipped.size > 0) failures.push(`attacks were skipped (GW_HOSTILE_SKIP=${[...skipped].join(",")}): a diagnosis run, not a pass`);
    expect(failures.join("\n\n")).toBe("");
  }, 150_000);
});

function junkTally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
