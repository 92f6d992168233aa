import { describe, expect, test } from "bun:test";
import { applyOcservImport, type ApiCall } from "../../../src/import/apply-ocserv-import.ts";
import { ocservFileReferences, planOcservImport } from "../../../src/import/ocserv-import-plan.ts";
import { parseOathUsers } from "../../../src/import/oath-users-file.ts";
import { apiFixture } from "../api/fixture.ts";

const CONFIG = `
# ocserv.conf as an operator has it
auth = "plain[passwd=/etc/ocserv/ocpasswd,otp=/etc/ocserv/users.oath]"
tcp-port = 443
udp-port = 443
server-cert = /etc/ocserv/server-cert.pem
server-key = /etc/ocserv/server-key.pem
ipv4-network = 10.77.0.0
ipv4-netmask = 255.255.255.0
ipv6-network = 2001:db8:77::/48
ipv6-subnet-prefix = 128
dns = 198.51.100.53
dns = 2001:db8::53
route = 198.51.100.0/255.255.255.0
route = 198.51.101.0/24
route = 2001:db8:2::/64
no-route = 198.51.100.128/255.255.255.128
split-dns = corp.example
default-domain = corp.example other.example
idle-timeout = 1200
mobile-idle-timeout = 2400
session-timeout = 86400
cookie-timeout = 600
dpd = 90
mobile-dpd = 1800
keepalive = 32400
mtu = 1400
max-same-clients = 2
max-clients = 16
tx-data-per-sec = 250000
max-ban-score = 80
ban-reset-time = 1200
isolate-workers = true
config-per-group = /etc/ocserv/config-per-group/
`;

/** Made here with `ocpasswd -c FILE -g staff,ops 'ä/b:c'` (password Secr3t:pw) and openssl passwd -6 -salt S PW. */
const PASSWD = [
  "ä/b:c:staff,ops:$5$GYFVgAy8p4eDAr/O$GAkjMdrNWNGpr442207.kcV9uVfwGge9Slz.tnyDC17",
  "bob:staff:$6$S$CH.Tlhu808mQDd2U8KdEhcn6RPUmKvFPPgR2H5yf9.5hKJlcAehZXMUO0Uv.0x1gWdsdDu7VEEjGIcpIjr3wh0",
  "carol:*:!$6$S$CH.Tlhu808mQDd2U8KdEhcn6RPUmKvFPPgR2H5yf9.5hKJlcAehZXMUO0Uv.0x1gWdsdDu7VEEjGIcpIjr3wh0",
  "broken line",
].join("\n");

const OTP = ["HOTP/T30 bob - 3132333435363738393031323334353637383930", "HOTP carol - 00112233445566778899", "HOTP/T30/8 nobody - 0011"].join("\n");

const groupFiles = [
  { name: "staff", text: "route = 203.0.113.0/255.255.255.0\ndns = 198.51.100.54\nsplit-dns = staff.example\nsplit-dns = intra.example\nidle-timeout = 300\nrx-data-per-sec = 1000\nrestrict-user-to-ports = \"tcp(443), icmp()\"\n" },
  { name: "bad name", text: "dns = 198.51.100.1\n" },
];
const userFiles = [{ name: "bob", text: "dns = 198.51.100.99\nexplicit-ipv4 = 10.77.0.50\nmtu = 1300\n" }];

describe("gw import ocserv: the plan", () => {
  test("auth= names the passwd and otp files; config-per-group its directory", () => {
    expect(ocservFileReferences(CONFIG)).toEqual({ passwd: "/etc/ocserv/ocpasswd", otp: "/etc/ocserv/users.oath", perGroupDir: "/etc/ocserv/config-per-group/" });
  });

  test("ocserv.conf maps to settings and groupDefaults; what has no equivalent is named", () => {
    const plan = planOcservImport({ config: CONFIG });
    expect(plan.settings).toEqual({
      port: 443,
      udpPort: 443,
      certFile: "/etc/ocserv/server-cert.pem",
      keyFile: "/etc/ocserv/server-key.pem",
      pool: "10.77.0.0/24",
      pool6: "2001:db8:77::/64",
      defaultRateDown: 2_000_000,
      cookieTimeout: 600,
      dpd: 90,
      mobileDpd: 1800,
      keepalive: 32400,
      mtu: 1400,
      maxSessionsPerUser: 2,
      maxSessions: 16,
      loginMaxFailuresPerIp: 8,
      loginFailureWindow: 1200,
      groupDefaults: {
        dns: ["198.51.100.53", "2001:db8::53"],
        routes: ["198.51.100.0/24", "198.51.101.0/24", "2001:db8:2::/64"],
        excludeRoutes: ["198.51.100.128/25"],
        splitDns: ["corp.example"],
        defaultDomain: "corp.example",
        idleTimeoutSeconds: 1200,
        sessionTimeoutSeconds: 86400,
      },
    });
    expect(plan.mapped).toContain("ocserv.conf: ipv6-network = 2001:db8:77::/48 -> pool6 2001:db8:77::/64 (gw's IPv6 pool is at most a /64: the network's first /64)");
    expect(plan.unmapped).toEqual([
      "ocserv.conf: mobile-idle-timeout: no gw equivalent",
      "ocserv.conf: isolate-workers: no gw equivalent",
    ]);
    expect(plan.problems).toEqual([]);
  });

  test("passwd, groups, users and OTP: hashes as they are, bad names and tokens skipped with the reason", () => {
    const plan = planOcservImport({ config: CONFIG, passwd: PASSWD, otp: OTP, groupFiles, userFiles });
    expect(plan.groups).toEqual([
      {
        name: "staff",
        policy: {
          routes: ["203.0.113.0/24"],
          dns: ["198.51.100.54"],
          splitDns: ["staff.example", "intra.example"],
          idleTimeoutSeconds: 300,
          rateUp: 8000,
          rules: [
            { action: "allow", to: "0.0.0.0/0", proto: "tcp", ports: "443", description: "from ocserv restrict-user-to-ports" },
            { action: "allow", to: "::/0", proto: "tcp", ports: "443", description: "from ocserv restrict-user-to-ports" },
            { action: "allow", to: "0.0.0.0/0", proto: "icmp", description: "from ocserv restrict-user-to-ports" },
          ],
        },
      },
      { name: "ops", policy: {} },
    ]);
    expect(plan.users.map((u) => [u.name, u.groups, u.hash?.slice(0, 4)])).toEqual([
      ["ä/b:c", ["staff", "ops"], "$5$G"],
      ["bob", ["staff"], "$6$S"],
      ["carol", [], "!$6$"],
    ]);
    const bob = plan.users.find((u) => u.name === "bob")!;
    expect(bob.overrides).toEqual({ dns: ["198.51.100.99"], staticAddress: "10.77.0.50", mtu: 1300 });
    expect(bob.otpSecret).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"); // RFC 6238's "12345678901234567890"
    expect(plan.problems).toEqual([
      "config-per-group/bad name: not a gw group name (letters, digits, '.', '_', '-'): skipped",
      "passwd line 4: not user:groups:hash",
      "otp user carol: HOTP: counter-based HOTP (gw's one-time codes are TOTP): skipped (enrol again with 'gw user otp enroll')",
      "otp user nobody: not among the imported users: skipped",
    ]);
  });

  test("liboath types: only 30-second, 6-digit TOTP without a PIN is importable", () => {
    const { users } = parseOathUsers("HOTP/T30/6 a - 00\nHOTP/T60 b - 00\nHOTP/T30 c 1234 00\nHOTP/T30/8 d - 00");
    expect(users.map((u) => [u.user, u.importable])).toEqual([["a", true], ["b", false], ["c", false], ["d", false]]);
  });
});

describe("gw import ocserv: applied through the API", () => {
  test("settings, groups, users, hashes and OTP land validated and audited; the old password logs in", async () => {
    const f = apiFixture();
    const call: ApiCall = async <T>(method: string, path: string, body?: unknown) => {
      const r = await f.request(method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
      return r.body as T;
    };
    const config = CONFIG.replace(/^server-(cert|key).*$/gm, "");
    const plan = planOcservImport({ config, passwd: PASSWD, otp: OTP, groupFiles, userFiles });
    const outcome = await applyOcservImport(plan, call);
    expect(outcome.failed).toEqual([]);
    const settings = (await f.request("GET", "/api/v1/config")).body;
    expect(settings).toMatchObject({ pool: "10.77.0.0/24", dpd: 90, groupDefaults: { splitDns: ["corp.example"] } });
    expect((await f.request("GET", "/api/v1/groups/staff")).body.policy.splitDns).toEqual(["staff.example", "intra.example"]);
    expect((await f.request("GET", "/api/v1/users/bob")).body).toMatchObject({ groups: ["staff"], dns: ["198.51.100.99"], staticAddress: "10.77.0.50", otp: { enrolled: true } });
    expect(await f.control.users.verifyPassword("ä/b:c", "Secr3t:pw")).toMatchObject({ ok: true, value: { name: "ä/b:c" } });
    expect(await f.control.users.verifyPassword("carol", "PW")).toEqual({ ok: true, value: undefined });
    expect(f.control.audit.list().map((a) => a.action)).toContain("user.otp.enroll");
  });
});
