/**
 * Regression (issue 8, item 4) through the real `gw serve`: a user name typed at login with a
 * newline, a forged timestamp and "login ok", terminal escapes and a NUL, sent as the spec's
 * urlencoded POST /auth over TLS, is written to the log on the one line of its failed login.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gwArgv } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

const HOSTILE = "eve\n2000-01-01T00:00:00.000Z login ok user=forged\r\x1b[2J\0\u2028x"; // the form trims the ends
const ESCAPED = '"eve\\x0a2000-01-01T00:00:00.000Z login ok user=forged\\x0d\\x1b[2J\\x00\\u{2028}x"';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /;

let namespace: ReturnType<typeof createLoopbackNamespace> | undefined;

describe.skipIf(!e2eAvailable())("gw serve log with a hostile user name", () => {
  let work: string;
  const procs = new ProcessGroup();

  beforeAll(() => {
    namespace = createLoopbackNamespace("lg");
    work = mkdtempSync(join(tmpdir(), "gw-log-injection-"));
  });

  afterAll(async () => {
    await procs.stopAll();
    namespace?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  test("a failed login with a forged line in the name is one escaped log line", async () => {
    const ns = namespace!.name;
    const server = procs.start([
      "ip", "netns", "exec", ns, ...gwArgv("sources"), "serve", "--data-dir", join(work, "data"),
      "--listen", "127.0.0.1", "--no-dtls", "--tun", "gwlg1", "--pool", "10.41.0.0/24", "--api-listen", "127.0.0.1:9561",
    ]);
    await server.waitFor("server certificate pin: ");

    const body = `username=${encodeURIComponent(HOSTILE)}&password=x`;
    const answer = execFileSync("ip", ["netns", "exec", ns, "curl", "-sk", "--max-time", "10", "--data-binary", body, "https://127.0.0.1/auth"], { encoding: "utf8", timeout: 20_000 });
    expect(answer).toContain("<auth"); // the login form again: the login failed
    await server.waitFor(/login failed /);

    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    const lines = server.stderr().split("\n");
    expect(lines.pop()).toBe(""); // the log ends with a newline
    // The ready line, the failed login, the stop: nothing forged in between.
    expect(lines.length).toBe(3);
    for (const line of lines) expect(line).toMatch(TIMESTAMP);
    expect(lines[0]).toContain(" ready: ");
    expect(lines[1]).toMatch(new RegExp(`^\\S+ login failed reason=\\S+ user=${escapeRegExp(ESCAPED)} peer=127\\.0\\.0\\.1:\\d+$`));
    expect(lines[2]).toMatch(/^\S+ SIGTERM: stopping, ending all sessions$/);
    expect(server.stderr()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
  }, 60_000);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
