// Gives a group a policy of N access rules, for benchmarks (gw has no rule commands yet).
//   bun scripts/bench/group-rules.ts DATA_DIR GROUP N LAN_NET
// The rules are what a company writes: the LAN's services by port, a few denies, other sites;
// whatever N, every packet the bench sends (iperf3 on 5201 and pings to LAN_NET) is allowed by
// rule 0 and looked up through the whole compiled table. Run it before `gw serve` starts.
import { join } from "node:path";
import { GroupService } from "../../src/control/groups.ts";
import type { Rule } from "../../src/firewall/rule.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";

const [dataDir, group, countText, lanNet] = process.argv.slice(2);
const count = Number(countText);
if (!dataDir || !group || !lanNet || !(count >= 1)) {
  console.error("usage: bun scripts/bench/group-rules.ts DATA_DIR GROUP N LAN_NET");
  process.exit(2);
}

function benchRules(n: number, lan: string): Rule[] {
  const rules: Rule[] = [{ action: "allow", to: lan, proto: "any", description: "the LAN" }];
  const ports = ["22", "25", "53", "80", "110", "143", "389", "443", "445", "636", "993", "1433", "3306", "3389", "5432", "8000-8080", "8443", "9000-9100"];
  for (let i = 1; rules.length < n; i++) {
    const site = `10.${(i * 7) % 256}.${(i * 13) % 256}.0/24`;
    const port = ports[i % ports.length]!;
    if (i % 5 === 0) rules.push({ action: "deny", to: site, proto: "tcp", ports: port, description: `no ${port} at site ${i}` });
    else if (i % 7 === 0) rules.push({ action: "allow", to: site, proto: "icmp" });
    else rules.push({ action: "allow", to: site, proto: i % 3 === 0 ? "udp" : "tcp", ports: port });
  }
  return rules;
}

const opened = openSqliteStore(join(dataDir, "gw.db"));
if (!opened.ok) throw opened.error;
const groups = new GroupService(opened.value, Date.now);
const current = groups.policyOf(group);
if (!current.ok) throw current.error;
const written = groups.replace(group, { ...current.value, rules: benchRules(count, lanNet) }, "local-cli");
opened.value.close();
if (!written.ok) {
  console.error(`gw bench: ${written.error.message}`);
  process.exit(1);
}
console.log(`group ${group}: ${count} rules`);
