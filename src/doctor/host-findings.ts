import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gatewaySettingsSchema, parseHostPort, type GatewaySettings } from "../config/gateway-config.ts";
import { natTableName } from "../serve/nat.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import { checkServerCertificate } from "./certificate-check.ts";
import type { Finding } from "./check.ts";
import { checkClock } from "./clock-check.ts";
import { checkDnsServers } from "./dns-check.ts";
import { checkForwarding, checkNetAdmin, checkTunDevice, readText } from "./host-checks.ts";
import { checkIpv6Forwarding } from "./ipv6-forwarding-check.ts";
import { checkPorts } from "./port-check.ts";

/** What gw doctor looks at: the data directory, and the server's pid when one serves it. */
export interface DoctorScope {
  dataDir: string;
  /** The stored settings document (unvalidated). */
  stored: Record<string, unknown>;
  serverPid?: number;
  now: number;
}

/**
 * The host checks of gw doctor besides open files: TUN, CAP_NET_ADMIN, forwarding, NAT, ports,
 * the server certificate, the clock and the DNS servers the groups hand out.
 */
export async function hostFindings(scope: DoctorScope): Promise<Finding[]> {
  const parsed = gatewaySettingsSchema.safeParse(scope.stored);
  if (!parsed.success) {
    return [{ check: "settings", status: "fail", detail: "the stored settings document does not validate", fix: "gw config check - < the document, then gw config set" }];
  }
  const settings = parsed.data;
  const whose = scope.serverPid !== undefined ? `gw serve (pid ${scope.serverPid})` : "this shell";
  const findings: Finding[] = [
    checkTunDevice(),
    checkNetAdmin(readText(`/proc/${scope.serverPid ?? "self"}/status`), whose),
    checkForwarding(),
    natFinding(settings, scope.serverPid !== undefined),
  ];
  if (settings.pool6 !== undefined) findings.push(checkIpv6Forwarding());
  if (scope.serverPid === undefined) findings.push(await checkPorts(portPlan(settings)));
  else findings.push({ check: "ports", status: "ok", detail: `held by gw serve (pid ${scope.serverPid})` });
  const certPath = settings.certFile ?? join(scope.dataDir, "server-cert.pem");
  findings.push(checkServerCertificate(existsSync(certPath) ? readFileSync(certPath, "utf8") : undefined, certPath, scope.now));
  findings.push(checkClock({ now: scope.now, storeWrittenAt: mtimeOf(join(scope.dataDir, "gw.db")), synchronized: ntpSynchronized() }));
  findings.push(await checkDnsServers(groupDnsServers(scope.dataDir)));
  return findings;
}

function portPlan(s: GatewaySettings) {
  const api = parseHostPort(s.apiListen) ?? { host: "127.0.0.1", port: 8443 };
  return { host: s.listen, tcp: s.port, udp: s.dtls ? (s.udpPort ?? s.port) : undefined, api };
}

function natFinding(s: GatewaySettings, running: boolean): Finding {
  const check = "NAT";
  if (!s.nat) return { check, status: "ok", detail: "off (the routed networks need a route back to the pool, or turn on nat)" };
  const table = natTableName(s.tunName);
  try {
    const listed = execFileSync("nft", ["list", "tables"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 5000 });
    if (!running) return { check, status: "ok", detail: "nft works; gw serve adds its table at start" };
    if (listed.includes(`table ip ${table}`)) return { check, status: "ok", detail: `masquerading in nft table ip ${table}` };
    return { check, status: "fail", detail: `nat is on but nft table ip ${table} is missing`, fix: "gw reload does not add it: restart gw serve; check its log for nat: lines" };
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === "ENOENT";
    return { check, status: "fail", detail: missing ? "nat is on but nft is not installed" : `nft failed: ${(e as Error).message.split("\n")[0]}`, fix: "apt-get install nftables, and run gw with CAP_NET_ADMIN" };
  }
}

function mtimeOf(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** timedatectl's NTPSynchronized, when the host has systemd; undefined when it cannot say. */
function ntpSynchronized(): boolean | undefined {
  try {
    const out = execFileSync("timedatectl", ["show", "-p", "NTPSynchronized", "--value"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 3000 }).trim();
    return out === "yes" ? true : out === "no" ? false : undefined;
  } catch {
    return undefined;
  }
}

function groupDnsServers(dataDir: string): string[] {
  const path = join(dataDir, "gw.db");
  if (!existsSync(path)) return [];
  const store = openSqliteStore(path);
  if (!store.ok) return [];
  try {
    const dnsOf = (g: { policyJson: string }): string[] => {
      try {
        const dns = (JSON.parse(g.policyJson) as { dns?: unknown }).dns;
        return Array.isArray(dns) ? dns.filter((d): d is string => typeof d === "string") : [];
      } catch {
        return []; // an unreadable policy is the store's problem, reported elsewhere
      }
    };
    return [...new Set(store.value.listGroups().flatMap(dnsOf))];
  } finally {
    store.value.close();
  }
}
