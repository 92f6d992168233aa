/**
 * Runs inside the network namespace reuseport-steering.test.ts creates (Bun or Deno): opens a
 * steered TCP group and a steered UDP group on one port, adopts each member in its own server
 * object (node:net listen({ fd }), node:dgram bind({ fd })), or hands one member to a child
 * process, sends one TCP connection and one UDP datagram from each source address, and prints one
 * JSON line: which member each arrived at. The test compares that with steeringIndex.
 *
 * Usage: <runtime> reuseport-steering-probe.ts '<ProbeCase JSON>'
 *        <runtime> reuseport-steering-probe.ts child   (the child: member fds at 3 (TCP) and 4 (UDP))
 */
import { spawn } from "node:child_process";
import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import { fileURLToPath } from "node:url";
import { createSelfSignedCertificate } from "../../src/pki/self-signed.ts";
import { loadReuseportLibc } from "../../src/runtime/reuseport-libc.ts";
import { openSteeredGroup } from "../../src/runtime/linux/steered-group.ts";

export interface ProbeCase {
  host: string;
  members: number;
  /** The address clients connect and send to. */
  target: string;
  sources: string[];
  /** Adopt UDP members too (false under Deno: see the test). */
  udp: boolean;
  /** Adopt TCP members with node:tls servers (as the gateway's front does) and connect with TLS. */
  tls?: boolean;
  /** Hand this member's fds to a child process instead of adopting them here, started with childCommand + [this file, "child"]. */
  childMember?: number;
  childCommand?: string[];
}

export interface Arrival {
  source: string;
  /** The member index the connection / datagram reached; -1: never arrived. */
  tcp: number;
  udp: number;
  /** The peer address the parent's TCP server saw (not recorded for the child's). */
  seen: string;
  /** Which process took it: "parent" or "child". */
  tcpBy: string;
  udpBy: string;
}

export interface ProbeReport {
  port: number;
  arrivals: Arrival[];
  /** Sockets the kernel has on the port (this namespace): the group members, no more. */
  tcpListeners: number;
  udpSockets: number;
  /** How adopting a UDP member failed, when it did. */
  udpAdoptError?: string;
}

const SELF = fileURLToPath(import.meta.url);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (process.argv[2] === "child") runChild();
else await runCase(JSON.parse(process.argv[2]!) as ProbeCase);

/** The child: adopts fd 3 (TCP) and fd 4 (UDP) and reports each arrival as a line on stdout. */
function runChild(): void {
  const server = net.createServer((c) => {
    console.log(`tcp ${c.remoteAddress}`);
    c.destroy();
  });
  server.listen({ fd: 3 }, () => {
    try {
      const udp = dgram.createSocket("udp4");
      udp.on("message", (_m, from) => console.log(`udp ${from.address}`));
      udp.bind({ fd: 4 } as dgram.BindOptions, () => console.log("ready"));
    } catch {
      console.log("ready"); // a runtime that cannot adopt UDP (Deno): TCP only
    }
  });
  process.stdin.on("end", () => process.exit(0)); // the parent closes stdin when done
  process.stdin.resume();
}

async function runCase(c: ProbeCase): Promise<void> {
  const libc = await loadReuseportLibc();
  if (!libc.ok) throw libc.error;
  const tcpGroup = openSteeredGroup(libc.value, { host: c.host, port: 0, members: c.members, kind: "tcp" });
  if (!tcpGroup.ok) throw tcpGroup.error;
  const port = tcpGroup.value.port;
  const udpGroup = openSteeredGroup(libc.value, { host: c.host, port, members: c.members, kind: "udp" });
  if (!udpGroup.ok) throw udpGroup.error;

  const tcpAt = new Map<string, { index: number; by: string; seen?: string }>();
  const udpAt = new Map<string, { index: number; by: string }>();
  const key = (address: string) => address.replace(/^::ffff:/, "");
  const closers: (() => void)[] = [];
  let udpAdoptError: string | undefined;

  let child: ReturnType<typeof spawn> | null = null;
  if (c.childMember !== undefined) {
    const member = c.childMember;
    const [command, ...args] = [...(c.childCommand ?? [process.execPath]), SELF, "child"];
    child = spawn(command!, args, { stdio: ["pipe", "pipe", "inherit", tcpGroup.value.fds[member]!, udpGroup.value.fds[member]!] });
    const ready = new Promise<void>((resolve) => {
      let buffered = "";
      child!.stdout!.on("data", (d: Buffer) => {
        buffered += d.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        for (const line of lines) {
          const [kind, address] = line.split(" ");
          if (kind === "ready") resolve();
          if (kind === "tcp") tcpAt.set(key(address!), { index: member, by: "child" });
          if (kind === "udp") udpAt.set(key(address!), { index: member, by: "child" });
        }
      });
    });
    await Promise.race([ready, wait(10_000)]);
  }

  const certificate = c.tls ? createSelfSignedCertificate({ commonName: "steer.test" }) : null;
  tcpGroup.value.fds.forEach((fd, index) => {
    if (index === c.childMember) return;
    const arrived = (socket: net.Socket) => {
      tcpAt.set(key(socket.remoteAddress!), { index, by: "parent", seen: socket.remoteAddress! });
      socket.end();
    };
    const server = certificate === null ? net.createServer(arrived) : tls.createServer({ key: certificate.keyPem, cert: certificate.certPem }, arrived);
    server.listen({ fd });
    closers.push(() => server.close());
  });
  if (c.udp) {
    udpGroup.value.fds.forEach((fd, index) => {
      if (index === c.childMember) return;
      try {
        const socket = dgram.createSocket(c.host.includes(":") ? "udp6" : "udp4");
        socket.on("message", (_m, from) => udpAt.set(key(from.address), { index, by: "parent" }));
        socket.bind({ fd } as dgram.BindOptions);
        closers.push(() => socket.close());
      } catch (e) {
        udpAdoptError = String(e);
      }
    });
  } else {
    // Say how adopting fails in this runtime, on a member nobody reads.
    try {
      dgram.createSocket("udp4").bind({ fd: udpGroup.value.fds[0]! } as dgram.BindOptions);
      udpAdoptError = "none";
    } catch (e) {
      udpAdoptError = String(e);
    }
  }
  await wait(200);

  for (const source of c.sources) {
    await new Promise<void>((resolve) => {
      const options = { host: c.target, port, localAddress: source };
      const socket = c.tls ? tls.connect({ ...options, rejectUnauthorized: false }) : net.connect(options);
      socket.on("data", () => {});
      // A member nobody accepts on would leave the connection open: give up after a while.
      socket.setTimeout(2000, () => socket.destroy());
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
    });
    const client = dgram.createSocket(source.includes(":") ? "udp6" : "udp4");
    await new Promise<void>((resolve) => client.bind(0, source, () => resolve()));
    await new Promise<void>((resolve) => client.send("hello", port, c.target, () => resolve()));
    client.close();
  }
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline && (tcpAt.size < c.sources.length || (c.udp && udpAt.size < c.sources.length))) await wait(50);

  const report: ProbeReport = {
    port,
    arrivals: c.sources.map((source) => ({
      source,
      tcp: tcpAt.get(key(source))?.index ?? -1,
      udp: udpAt.get(key(source))?.index ?? -1,
      seen: tcpAt.get(key(source))?.seen ?? "",
      tcpBy: tcpAt.get(key(source))?.by ?? "",
      udpBy: udpAt.get(key(source))?.by ?? "",
    })),
    tcpListeners: countSockets("tcp", port, "0A"),
    udpSockets: countSockets("udp", port),
    ...(udpAdoptError === undefined ? {} : { udpAdoptError }),
  };
  for (const close of closers) close();
  child?.stdin?.end();
  console.log(JSON.stringify(report));
  process.exit(0);
}

/** Entries in /proc/net/{tcp,udp}{,6} with this local port (and TCP state, hex). */
function countSockets(protocol: "tcp" | "udp", port: number, state?: string): number {
  let count = 0;
  for (const file of [`/proc/net/${protocol}`, `/proc/net/${protocol}6`]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 4) continue;
      const localPort = parseInt(fields[1]!.split(":")[1]!, 16);
      if (localPort === port && (state === undefined || fields[3] === state)) count++;
    }
  }
  return count;
}
