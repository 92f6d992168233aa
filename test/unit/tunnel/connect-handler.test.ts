import { describe, expect, test } from "bun:test";
import { compilePolicy, type GroupPolicy } from "../../../src/control/group-policy.ts";
import { SessionRegistry, type LiveConnection, type Session } from "../../../src/control/sessions.ts";
import { AddressPool } from "../../../src/net/address-pool.ts";
import { parseCidr } from "../../../src/net/ipv4.ts";
import { decideConnect } from "../../../src/tunnel/connect-handler.ts";
import { HeaderList, type HttpRequest } from "../../../src/front/http-head.ts";
import type { ConnectContext } from "../../../src/tunnel/connect-handler.ts";
import type { TunnelDefaults } from "../../../src/tunnel/tunnel-params.ts";

const defaults: TunnelDefaults = { mtu: 1400, dpdSeconds: 30, keepaliveSeconds: 20, mobileDpdSeconds: 600, poolPrefixLength: 24, serverName: "gw test" };

/** decideConnect with a real registry and pool; the rest of the data plane is not touched by it. */
function fixture() {
  let now = 1_000_000;
  const sessions = new SessionRegistry(300_000, () => now);
  const cidr = parseCidr("10.10.0.0/24");
  if (!cidr.ok) throw cidr.error;
  const pool = new AddressPool(cidr.value);
  const plane = { sessions, now: () => now, log: () => {} } as unknown as ConnectContext;
  const login = (user: string, policy: GroupPolicy = { routes: [], excludeRoutes: [], dns: [] }, maxLivePerUser?: number) =>
    sessions.create({ user, group: "g", policy: compilePolicy(policy), configHash: "h", maxLivePerUser });
  const connect = (token: string) => {
    const request = { method: "CONNECT", target: "/CSCOSSLC/tunnel", headers: new HeaderList([["Cookie", `webvpn=${token}`]]) } as unknown as HttpRequest;
    return decideConnect(request, plane, pool, defaults, () => undefined);
  };
  return { sessions, connect, login, advance: (ms: number) => (now += ms) };
}

function live(): LiveConnection {
  return { close: () => {}, info: {} as LiveConnection["info"] };
}

function headersOf(d: ReturnType<ReturnType<typeof fixture>["connect"]>): Map<string, string> {
  if (d.kind !== "accept") throw new Error(`refused: ${d.response.body}`);
  return new Map(d.headers);
}

describe("CONNECT: the user's session limit counts live sessions (ocserv's max-same-clients)", () => {
  test("a crashed client's detached session does not count at login; when it comes back it is checked again", () => {
    const f = fixture();
    const first = f.login("alice", undefined, 1);
    expect(f.connect(first.token).kind).toBe("accept");
    const firstConnection = live();
    f.sessions.attach(first.session, firstConnection);
    expect(f.sessions.liveCountOf("alice")).toBe(1);

    // kill -9: the connection is lost, the session waits for its cookie.
    f.sessions.detach(first.session, firstConnection);
    expect(f.sessions.liveCountOf("alice")).toBe(0);

    const second = f.login("alice", undefined, 1);
    // A fresh login holds its place until its first CONNECT.
    expect(f.sessions.liveCountOf("alice")).toBe(1);
    expect(f.connect(second.token).kind).toBe("accept");
    f.sessions.attach(second.session, live());

    const back = f.connect(first.token);
    expect(back.kind).toBe("refuse");
    if (back.kind === "refuse") {
      expect(back.response.status).toBe(503);
      expect(new Map(back.response.headers).get("X-Reason")).toBe("this user already has 1 connected session(s), the most allowed: disconnect one first");
    }
    expect(first.session.ended).toBe(false); // refused, not ended: it may come back later
  });

  test("a connected session replaced by a new connection is not refused; no limit means none", () => {
    const f = fixture();
    const s: { session: Session; token: string } = f.login("bob", undefined, 1);
    f.sessions.attach(s.session, live());
    expect(f.connect(s.token).kind).toBe("accept");
    const free = f.login("carol");
    f.sessions.attach(free.session, live());
    const more = f.login("carol");
    expect(f.connect(more.token).kind).toBe("accept");
  });
});

describe("CONNECT: timeouts announced as ocserv does", () => {
  test("no session or idle timeout: none", () => {
    const f = fixture();
    const h = headersOf(f.connect(f.login("alice").token));
    expect(h.get("X-CSTP-Session-Timeout")).toBe("none");
    expect(h.get("X-CSTP-Session-Timeout-Remaining")).toBe("none");
    expect(h.get("X-CSTP-Lease-Duration")).toBe("none");
    expect(h.get("X-CSTP-Idle-Timeout")).toBe("none");
  });

  test("the session timeout and what remains of it since the login; the group's idle timeout", () => {
    const f = fixture();
    const { token } = f.login("alice", { routes: [], excludeRoutes: [], dns: [], sessionTimeoutSeconds: 3600, idleTimeoutSeconds: 600 });
    f.advance(100_500);
    const h = headersOf(f.connect(token));
    expect(h.get("X-CSTP-Session-Timeout")).toBe("3600");
    expect(h.get("X-CSTP-Session-Timeout-Remaining")).toBe("3499");
    expect(h.get("X-CSTP-Lease-Duration")).toBe("3600");
    expect(h.get("X-CSTP-Idle-Timeout")).toBe("600");
  });
});
