import { createServer } from "node:net";
import { createSocket } from "node:dgram";
import type { Finding } from "./check.ts";

export interface PortPlan {
  host: string;
  tcp: number;
  /** Absent: DTLS is off. */
  udp?: number;
  api: { host: string; port: number };
}

/** Can this host bind what gw serve will listen on? Only meaningful while no server runs. */
export async function checkPorts(plan: PortPlan): Promise<Finding> {
  const check = "ports";
  const wanted = [
    { what: `tunnel TCP ${plan.host}:${plan.tcp}`, probe: () => bindTcp(plan.host, plan.tcp) },
    ...(plan.udp !== undefined ? [{ what: `DTLS UDP ${plan.host}:${plan.udp}`, probe: () => bindUdp(plan.host, plan.udp!) }] : []),
    { what: `management API TCP ${plan.api.host}:${plan.api.port}`, probe: () => bindTcp(plan.api.host, plan.api.port) },
  ];
  const problems: string[] = [];
  let fix: string | undefined;
  for (const w of wanted) {
    const code = await w.probe();
    if (code === undefined) continue;
    problems.push(`${w.what}: ${code}`);
    fix ??=
      code === "EADDRINUSE"
        ? "another program holds the port: find it with ss -ltnup, stop it (ocserv?) or choose another port (gw config set port N)"
        : code === "EACCES"
          ? "ports below 1024 need root or CAP_NET_BIND_SERVICE (AmbientCapabilities=CAP_NET_BIND_SERVICE under systemd)"
          : "check the listen address exists on this host (ip -br addr)";
  }
  if (problems.length === 0) return { check, status: "ok", detail: `free: ${wanted.map((w) => w.what).join(", ")}` };
  return { check, status: "fail", detail: problems.join("; "), fix };
}

function bindTcp(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

function bindUdp(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
    socket.once("error", (e: NodeJS.ErrnoException) => {
      socket.close();
      resolve(e.code ?? e.message);
    });
    socket.bind({ address: host, port, exclusive: true }, () => socket.close(() => resolve(undefined)));
  });
}
