/**
 * `gw serve` startup problems end with one clear line and a non-zero exit code, and leave
 * nothing behind (the TUN device of a failed start is gone).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { gwArgv } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

let ns = "";
let namespace: ReturnType<typeof createLoopbackNamespace> | undefined;

describe.skipIf(!e2eAvailable())("gw serve startup errors", () => {
  let work: string;
  const procs = new ProcessGroup();

  beforeAll(() => {
    namespace = createLoopbackNamespace("st");
    ns = namespace.name;
    work = mkdtempSync(join(tmpdir(), "gw-startup-"));
  });

  afterAll(async () => {
    await procs.stopAll();
    namespace?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  /** Runs gw serve to completion inside the namespace, behind an optional wrapper. */
  const serve = (args: string[], wrapper: string[] = []) => {
    const r = spawnSync("ip", ["netns", "exec", ns, ...wrapper, ...gwArgv("sources"), "serve", "--data-dir", join(work, "data"), "--listen", "127.0.0.1", ...args], {
      encoding: "utf8",
      timeout: 30_000,
    });
    return { code: r.status, stderr: r.stderr.trim(), stdout: r.stdout };
  };

  const expectOneLine = (r: { code: number | null; stderr: string }, code: string, hint: RegExp) => {
    expect(r.code).toBe(1);
    const lines = r.stderr.split("\n");
    expect(lines.length).toBe(1);
    expect(lines[0]).toStartWith(`gw: ${code}: `);
    expect(lines[0]).toMatch(hint);
  };

  test("unreadable certificate file", () => {
    expectOneLine(serve(["--tun", "gwst1", "--cert", "/nonexistent/c.pem", "--key", "/nonexistent/k.pem"]), "cert_unreadable", /\/nonexistent\/c\.pem/);
  });

  test("--cert without --key is a configuration error", () => {
    expectOneLine(serve(["--tun", "gwst1", "--cert", "/etc/hostname"]), "invalid_config", /--cert and --key go together/);
  });

  test("a pool with host bits set is a configuration error", () => {
    expectOneLine(serve(["--tun", "gwst1", "--pool", "10.10.0.1/24"]), "invalid_config", /did you mean 10\.10\.0\.0\/24/);
  });

  test("unwritable data directory", () => {
    const r = spawnSync("ip", ["netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", "/proc/gw-cannot-exist"], { encoding: "utf8", timeout: 30_000 });
    expectOneLine({ code: r.status, stderr: r.stderr.trim() }, "data_dir_unwritable", /--data-dir or GW_DATA_DIR/);
  });

  test("no CAP_NET_ADMIN", () => {
    expectOneLine(serve(["--tun", "gwst1"], ["setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin"]), "tun_permission", /CAP_NET_ADMIN|root/);
  });

  test("no /dev/net/tun", () => {
    const hide = `mount -t tmpfs gwst-empty /dev/net && exec "$0" "$@"`;
    expectOneLine(serve(["--tun", "gwst1"], ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide]), "tun_unavailable", /\/dev\/net\/tun/);
  });

  /** Starts gw serve with these flags, waits for its ready line, stops it; returns what it logged. */
  const readyLine = async (args: string[], wrapper: string[] = []) => {
    const gw = procs.start(["ip", "netns", "exec", ns, ...wrapper, ...gwArgv("sources"), "serve", "--data-dir", join(work, "auto"), "--listen", "127.0.0.1", "--port", "8453", "--api-listen", "127.0.0.1:9453", "--tun", "gwst5", "--pool", "10.13.0.0/24", ...args]);
    await gw.waitFor(/ready: .*\n/);
    gw.child.kill("SIGTERM");
    expect(await gw.exited).toBe(0);
    return gw.stderr();
  };

  test("--workers 0 (auto): one worker per core, or one process and why", async () => {
    const cores = availableParallelism();
    const plain = await readyLine(["--workers", "0"]);
    expect(plain).toMatch(cores >= 2 ? new RegExp(`, "${Math.min(cores, 16)} worker processes \\(auto: one per core\\)"\n`) : /, "one process \(auto: one core\)"\n/);
    if (cores < 2) return;
    // No CAP_BPF (nor CAP_SYS_ADMIN): the TUN steering program cannot load, so one process, with the reason logged.
    const noBpf = await readyLine(["--workers", "0"], ["setpriv", "--bounding-set=-bpf,-sys_admin", "--inh-caps=-bpf,-sys_admin"]);
    expect(noBpf).toMatch(/workers auto: one process instead of \d+: /);
    expect(noBpf).toMatch(/, "one process \(auto: \w+, see above\)"\n/);
  }, 90_000);

  test("port in use: the second gateway says so, removes its TUN device, and the first keeps serving", async () => {
    const first = procs.start(["ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", join(work, "first"), "--listen", "127.0.0.1", "--port", "8443", "--api-listen", "127.0.0.1:9443", "--tun", "gwst2", "--pool", "10.11.0.0/24"]);
    await first.waitFor("server certificate pin: ");
    const udpTaken = serve(["--port", "8443", "--api-listen", "127.0.0.1:9444", "--tun", "gwst3", "--pool", "10.12.0.0/24"]);
    expectOneLine(udpTaken, "udp_port_in_use", /UDP 127\.0\.0\.1:8443 is already in use.*--no-dtls/);
    const tcpTaken = serve(["--port", "8443", "--no-dtls", "--api-listen", "127.0.0.1:9444", "--tun", "gwst3", "--pool", "10.12.0.0/24"]);
    expectOneLine(tcpTaken, "port_in_use", /TCP 127\.0\.0\.1:8443 is already in use/);
    const links = execFileSync("ip", ["-n", ns, "-o", "link"], { encoding: "utf8" });
    expect(links).toContain("gwst2");
    expect(links).not.toContain("gwst3");
    expect(first.child.exitCode).toBeNull();
  }, 60_000);
});
