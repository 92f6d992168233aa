/**
 * The web UI in a real browser against a real `gw serve`: Debian's chromium driven by
 * playwright-core, both inside a loopback-only network namespace (chromium through a wrapper
 * script that enters it). Sign in with an admin account, see the dashboard's live figures move,
 * the users page, sign out; no console errors (the CSP would report inline code there).
 * Screenshots go to test-output/ui/ for a reviewer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { ControlPlane } from "../../src/control/control-plane.ts";
import { SessionRegistry } from "../../src/control/sessions.ts";
import { bunPasswordHasher } from "../../src/runtime/bun/password-hasher.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { gwArgv, repoRoot } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = join(repoRoot, "test-output", "ui");
const PORT = 9643;
const PASSWORD = "browser test password";

describe.skipIf(!e2eAvailable() || !existsSync(CHROMIUM))("web UI in a browser", () => {
  let work: string;
  let namespace: ReturnType<typeof createLoopbackNamespace> | undefined;
  let browser: Browser | undefined;
  const procs = new ProcessGroup();

  beforeAll(async () => {
    namespace = createLoopbackNamespace("ui");
    work = mkdtempSync(join(tmpdir(), "gw-ui-browser-"));
    mkdirSync(SHOTS, { recursive: true });
    const dataDir = join(work, "data");
    execFileSync("ip", ["netns", "exec", namespace.name, ...gwArgv("sources"), "init", "--data-dir", dataDir], { timeout: 30_000, stdio: "pipe" });
    // The first admin, written to the store as `gw admin add` will (that command is not there yet).
    const store = openSqliteStore(join(dataDir, "gw.db"));
    if (!store.ok) throw store.error;
    const control = new ControlPlane({ store: store.value, hasher: bunPasswordHasher, sessions: new SessionRegistry(300_000, Date.now), now: Date.now });
    const added = await control.admins.add({ name: "alice", role: "admin", password: PASSWORD }, "local-cli");
    store.value.close();
    if (!added.ok) throw added.error;

    const server = procs.start(["ip", "netns", "exec", namespace.name, ...gwArgv("sources"), "serve", "--data-dir", dataDir, "--listen", "127.0.0.1", "--port", "8443", "--api-listen", `127.0.0.1:${PORT}`, "--tun", `gwui${process.pid % 1000}`, "--pool", "10.47.0.0/24"]);
    await server.waitFor("server certificate pin: ", 30_000);

    const wrapper = join(work, "chromium-in-netns");
    writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${namespace.name} ${CHROMIUM} "$@"\n`);
    chmodSync(wrapper, 0o755);
    browser = await chromium.launch({ executablePath: wrapper, headless: true, args: ["--no-sandbox", "--ignore-certificate-errors"] });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await procs.stopAll();
    namespace?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  test("sign in, watch the dashboard update live, open the users page, sign out; no console errors", async () => {
    const context = await browser!.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("response", (r) => void (r.status() >= 400 && problems.push(`${r.status()} ${r.request().method()} ${r.url()}`)));

    // A browser at / is sent to the UI, and without a session on to the sign-in page.
    await page.goto(`https://127.0.0.1:${PORT}/`);
    expect(new URL(page.url()).pathname).toBe("/ui/sign-in");
    await page.screenshot({ path: join(SHOTS, "1-sign-in.png") });
    await page.getByLabel("Name").fill("alice");
    await page.getByLabel("Password").fill("wrong password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText("Wrong name, password or code.").waitFor();
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(/\/ui$/);
    await page.getByText("alice (admin)").waitFor();

    // The live figures are replaced from the stream: wait for the uptime card to change without a reload.
    const uptime = page.locator(".card", { hasText: "Uptime" }).locator(".value");
    const first = await uptime.textContent();
    await page.waitForFunction((before) => [...document.querySelectorAll(".card")].find((c) => c.textContent?.includes("Uptime"))?.querySelector(".value")?.textContent !== before, first, { timeout: 10_000 });
    // The chart drew (uPlot makes a canvas once samples arrive).
    await page.locator("#throughput-chart canvas").waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, "2-dashboard.png"), fullPage: true });

    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("heading", { name: "Users" }).waitFor();
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("bob");
    await page.getByLabel("Password", { exact: true }).fill("bob's password");
    await page.getByRole("button", { name: "Create user" }).click();
    await page.getByText("User bob created.").waitFor();
    await page.screenshot({ path: join(SHOTS, "3-users.png"), fullPage: true });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Dashboard" }).click();
    await page.getByText("Live sessions").waitFor();
    await page.screenshot({ path: join(SHOTS, "4-dashboard-phone.png"), fullPage: true });

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/ui\/sign-in$/);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
