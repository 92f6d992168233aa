/**
 * kill -9 during a burst of API writes: after a restart every acknowledged write is there and
 * the store opens cleanly (PRAGMA integrity_check). The server answers only after the commit
 * (SQLite WAL, synchronous=FULL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { gwArgv, repoRoot, startGw, tempDir } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

describe.skipIf(!e2eAvailable())("the store survives kill -9 during API writes", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let work: string;

  beforeAll(() => {
    topology = createTopology("k");
    procs = new ProcessGroup();
    work = tempDir("crash");
  });

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("every acknowledged write survives; the store is intact; the server starts again", async () => {
    const dataDir = join(work, "data");
    const gw = await startGw("sources", topology, procs, dataDir);
    const token = /admin API token \(shown once; store it now\): (gw_\S+)/.exec(gw.process.stdout())![1]!;
    const burst = procs.start([...topology.exec(topology.gateway), process.execPath, join(repoRoot, "test/e2e/fixtures/api-burst.ts"), "https://127.0.0.1:8443", token, "4"]);
    // Kill in the middle of the burst: once plenty of writes were acknowledged.
    await burst.waitFor(/ack user burst-\d-40\n/, 60_000);
    gw.process.child.kill("SIGKILL");
    expect(await gw.process.exited).toBeNull();
    await burst.exited;

    const acked = [...burst.stdout().matchAll(/^ack (group|user) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(acked.length).toBeGreaterThan(80);

    const db = new DatabaseSync(join(dataDir, "gw.db"));
    try {
      expect(db.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      const groups = new Set((db.prepare("SELECT name FROM groups").all() as { name: string }[]).map((r) => r.name));
      const users = new Set((db.prepare("SELECT name FROM users").all() as { name: string }[]).map((r) => r.name));
      const lost = acked.filter(([kind, name]) => !(kind === "group" ? groups : users).has(name));
      expect(lost).toEqual([]);
      // Each write landed with its audit record, or not at all.
      const audited = (db.prepare("SELECT count(*) AS n FROM audit WHERE action IN ('group.create', 'user.create')").get() as { n: number }).n;
      expect(audited).toBe(groups.size + users.size);
    } finally {
      db.close();
    }

    // The dead server left api.json behind: the CLI notices nobody answers and uses the store.
    expect(existsSync(join(dataDir, "api.json"))).toBe(true);
    const offline = execFileSync(topology.exec(topology.gateway)[0]!, [...topology.exec(topology.gateway).slice(1), ...gwArgv("sources"), "status", "--json", "--data-dir", dataDir], { encoding: "utf8" });
    const status = JSON.parse(offline);
    expect(status.running).toBe(false);
    expect(status.users).toBeGreaterThanOrEqual(acked.filter(([kind]) => kind === "user").length);

    // The server starts again on the same data directory (the stale api.json is replaced).
    const again = await startGw("sources", topology, procs, dataDir);
    const listed = execFileSync(topology.exec(topology.gateway)[0]!, [...topology.exec(topology.gateway).slice(1), ...gwArgv("sources"), "user", "list", "--json", "--data-dir", dataDir], { encoding: "utf8" });
    const names = new Set(JSON.parse(listed).map((u: { name: string }) => u.name));
    expect(acked.filter(([kind, name]) => kind === "user" && !names.has(name))).toEqual([]);
    again.process.child.kill("SIGTERM");
    expect(await again.process.exited).toBe(0);
  }, 120_000);
});
