import { createSocket } from "node:dgram";
import { randomBytes } from "node:crypto";
import type { Finding } from "./check.ts";

const TIMEOUT_MS = 1500;

/**
 * The DNS servers handed to clients (groups' dns): each asked for the root's NS records from this
 * host. Clients reach them through the tunnel, so a server the gateway cannot reach is usually a
 * routing or forwarding problem on this side.
 */
export async function checkDnsServers(servers: readonly string[], port = 53): Promise<Finding> {
  const check = "DNS servers";
  if (servers.length === 0) return { check, status: "ok", detail: "no group hands out DNS servers (clients keep their own)" };
  const results = await Promise.all(servers.map(async (s) => [s, await answers(s, port)] as const));
  const silent = results.filter(([, ok]) => !ok).map(([s]) => s);
  if (silent.length === 0) return { check, status: "ok", detail: `answering: ${servers.join(", ")}` };
  return {
    check,
    status: "warn",
    detail: `no answer within ${TIMEOUT_MS} ms from ${silent.join(", ")} (of ${servers.join(", ")})`,
    fix: "check the route from the gateway to these servers (ip route get ADDRESS) and that they answer queries from the VPN pool; or change the groups' --dns",
  };
}

/** A root NS query; any well-formed answer with our id counts (even a refusal: the server is there). */
function answers(server: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const id = randomBytes(2);
    const query = Buffer.concat([id, Buffer.from([0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 2, 0, 1])]);
    const socket = createSocket(server.includes(":") ? "udp6" : "udp4");
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), TIMEOUT_MS);
    socket.on("error", () => done(false));
    socket.on("message", (m) => {
      if (m.length >= 12 && m[0] === id[0] && m[1] === id[1] && (m[2]! & 0x80) !== 0) done(true);
    });
    socket.send(query, port, server);
  });
}
