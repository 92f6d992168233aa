/**
 * The web UI against real VPN sessions: gw serve and headless chromium in the gateway's
 * namespace, Debian's openconnect in the client's. The first admin signs in with the password
 * gw serve printed; a session appears in the live table without a reload; the chart and rates
 * move while ping traffic flows; Disconnect ends openconnect; a user made in the UI logs in with
 * openconnect; a user's and an admin's one-time codes are enrolled (QR shown once) and the admin
 * then signs in with a code; a bad rule is shown beside its field; a read admin cannot change
 * anything; no console errors. Screenshots go to test-output/ui-openconnect/ for a reviewer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { base32Decode, totpCode } from "../../src/control/auth/totp.ts";
import { unwrap } from "../../src/errors.ts";
import { provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, waitAddressesSettled, type Topology } from "../harness/topology.ts";

const CHROMIUM = "/usr/bin/chromium";
/** The code an authenticator app with this base32 secret shows at `at`. */
const codeAt = (secret: string, at: number) => totpCode(unwrap(base32Decode(secret.trim())), at);
const SHOTS = join(repoRoot, "test-output", "ui-openconnect");
const UI = "https://127.0.0.1:8443/ui";
/** Every page of the navigation. */
const PAGES = ["", "/connections", "/users", "/groups", "/groups/staff", "/tokens", "/bans", "/admins", "/settings", "/audit", "/users/alice"];
/** Labels of buttons that change something: a read admin must see none of them. */
const CHANGE_BUTTONS = ["Disconnect", "Create user", "Save group", "Delete", "Create group", "Create token", "Revoke", "Lift", "Add admin", "Remove", "Save settings", "Save user", "Set password", "Enrol OTP", "Disable", "Make admin", "Make read only"];

describe.skipIf(!e2eAvailable() || !existsSync(CHROMIUM))("web UI with real openconnect sessions", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let firstPassword: string;
  /** Console errors, page errors and failed responses of the admin's pages. */
  const problems: string[] = [];

  const watch = (p: Page, into: string[]) => {
    // Each problem names the page it happened on and when, so a rare one says where to look.
    const at = () => `${new Date().toISOString().slice(11, 23)} on ${p.url()}`;
    p.on("console", (m) => void (m.type() === "error" && into.push(`console: ${m.text()} (${at()})`)));
    p.on("pageerror", (e) => into.push(`page error: ${e.message} (${at()})`));
    p.on("response", (r) => void (r.status() >= 400 && into.push(`${r.status()} ${r.request().method()} ${r.url()}`)));
    // Disconnect and delete ask first (data-confirm): say yes.
    p.on("dialog", (d) => void d.accept());
  };
  const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    topology = createTopology("ui");
    procs = new ProcessGroup();
    work = tempDir("ui-oc");
    mkdirSync(SHOTS, { recursive: true });
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"],
    ]);
    gw = await startGw("sources", topology, procs, dataDir);
    // The first start of this data directory made the web UI's first admin and printed its password once.
    const line = gw.process.stdout().split("\n").find((l) => l.startsWith("web UI admin account created"));
    expect(line).toContain("gw admin passwd admin");
    firstPassword = /password (\S+);/.exec(line ?? "")?.[1] ?? "";
    expect(firstPassword.length).toBeGreaterThanOrEqual(20);

    const wrapper = join(work, "chromium-in-netns");
    writeFileSync(wrapper, `#!/bin/sh\nexec ${topology.exec(topology.gateway).join(" ")} ${CHROMIUM} "$@"\n`);
    chmodSync(wrapper, 0o755);
    await waitAddressesSettled(topology.gateway);
    browser = await chromium.launch({ executablePath: wrapper, headless: true, args: ["--no-sandbox", "--ignore-certificate-errors"] });
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    watch(page, problems);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const stateDir = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  test("the first admin signs in with the printed password", async () => {
    await page.goto(`${UI}/sign-in`);
    await page.getByLabel("Name").fill("admin");
    await page.getByLabel("Password").fill(firstPassword);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(/\/ui$/);
    await page.getByText("admin (admin)").waitFor();
  }, 30_000);

  test("a real session appears live, its rate and the chart move with traffic, and Disconnect ends openconnect", async () => {
    await page.goto(`${UI}/connections`);
    await page.getByText("No live sessions.").waitFor();
    const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: stateDir("alice"), flags: ["--authgroup", "staff"] });
    await waitForScript(stateDir("alice"), "connect");
    // No reload: the row arrives over the stream.
    const row = page.locator("#connection-rows tr", { hasText: "alice" });
    await row.waitFor({ timeout: 15_000 });
    const ping = procs.start([...topology.exec(topology.client), "ping", "-i", "0.2", "-s", "1000", topology.lanHost]);
    // The rate column turns from "—" into figures while the ping flows.
    await page.waitForFunction(() => /\d B\/s|kB\/s/.test(document.querySelector("#connection-rows tr .rate")?.textContent ?? ""), undefined, { timeout: 15_000 });
    await shot(page, "1-connections-live");

    await page.getByRole("link", { name: "Dashboard" }).click();
    await page.locator("#throughput-chart canvas").waitFor({ timeout: 10_000 });
    await page.waitForFunction(() => /[1-9][\d.]* (B|kB|MB)\/s/.test(document.querySelector("#rate-in .value")?.textContent ?? ""), undefined, { timeout: 15_000 });
    const canvas = () => page.evaluate(() => (document.querySelector("#throughput-chart canvas") as HTMLCanvasElement).toDataURL());
    const before = await canvas();
    await page.waitForTimeout(2500);
    expect(await canvas()).not.toBe(before);
    await expect(page.locator("#live-sessions .value").textContent()).resolves.toBe("1");
    await shot(page, "2-dashboard-traffic");
    ping.child.kill("SIGINT");

    await page.getByRole("link", { name: "Connections" }).click();
    await row.getByRole("button", { name: "Disconnect" }).click();
    await page.getByText("Disconnected.").waitFor();
    const code = await Promise.race([oc.exited, Bun.sleep(15_000).then(() => "still running")]);
    expect(code).not.toBe("still running");
    await page.getByText("No live sessions.").waitFor({ timeout: 10_000 });
    await shot(page, "3-disconnected");
  }, 90_000);

  test("the user page draws alice's usage per day with uPlot; the dark theme follows the system", async () => {
    const before = problems.length;
    await page.goto(`${UI}/users/alice`);
    // The session above moved traffic: the ledger has a day, drawn as a chart beside the table of figures.
    await page.locator("#usage-chart canvas").waitFor({ timeout: 10_000 });
    const figures = JSON.parse((await page.locator("#usage-chart").getAttribute("data-usage")) ?? "{}") as { days: string[]; rx: number[]; tx: number[] };
    expect(figures.days.length).toBeGreaterThan(0);
    expect(figures.rx[0]! + figures.tx[0]!).toBeGreaterThan(0);
    await page.locator("#usage table caption", { hasText: "Traffic per day" }).waitFor();
    await page.locator("#usage").scrollIntoViewIfNeeded();
    await shot(page, "3b-user-usage-chart");
    await page.emulateMedia({ colorScheme: "dark" });
    try {
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r, g, b] = (background.match(/\d+/g) ?? []).map(Number);
      expect(r! + g! + b!, background).toBeLessThan(3 * 96);
      await shot(page, "3c-dark-user");
      await page.goto(`${UI}`);
      await page.locator("#throughput-chart canvas").waitFor({ timeout: 10_000 });
      await shot(page, "3d-dark-dashboard");
    } finally {
      await page.emulateMedia({ colorScheme: "light" });
    }
    expect(problems.slice(before)).toEqual([]);
  }, 30_000);

  test("a user created in the UI logs in with openconnect", async () => {
    await page.goto(`${UI}/users`);
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("carol");
    await page.getByLabel("Password", { exact: true }).fill("carol-pass-3");
    await page.getByLabel("Groups (comma-separated)").fill("staff");
    await page.getByRole("button", { name: "Create user" }).click();
    await page.getByText("User carol created.").waitFor();
    const state = stateDir("carol");
    const oc = startOpenconnect(topology, procs, { user: "carol", password: "carol-pass-3", pin: gw.pin, stateDir: state, interface: "oc1", flags: ["--authgroup", "staff"] });
    const env = await waitForScript(state, "connect");
    expect(env.get("INTERNAL_IP4_ADDRESS")).toMatch(/^10\.10\.0\.\d+$/);
    await page.goto(`${UI}/users/carol`);
    await page.locator("tbody tr", { hasText: "staff" }).first().waitFor();
    await shot(page, "4-user-carol");
    oc.child.kill("SIGINT");
    await oc.exited;
    // One-time codes for carol: the QR code is shown once, and it renders under the page's CSP.
    await page.goto(`${UI}/users?q=carol`);
    await page.locator("tbody tr", { hasText: "carol" }).getByRole("button", { name: "Enrol OTP" }).click();
    const qr = page.getByRole("img", { name: "QR code for carol's authenticator app" });
    await qr.waitFor();
    expect(await qr.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    await shot(page, "4b-user-carol-otp");
    await page.goto(`${UI}/users?q=carol`);
    await page.locator("tbody tr", { hasText: "carol" }).getByRole("button", { name: "Reset OTP" }).waitFor();
  }, 60_000);

  test("a group rule with a bad network is shown beside its field and nothing is saved", async () => {
    await page.goto(`${UI}/groups/staff`);
    await page.getByLabel("Access rules").selectOption("explicit");
    await page.getByLabel("Rule 1 address or network").fill("198.51.100.0/33");
    await page.getByRole("button", { name: "Save group" }).click();
    const message = page.locator("#f-rules-0-to-error");
    await message.waitFor();
    expect(await message.textContent()).toContain("33");
    expect(await page.getByLabel("Rule 1 address or network").getAttribute("aria-invalid")).toBe("true");
    await shot(page, "5-group-rule-error");
    // A valid rule saves, and the trace names it.
    await page.getByLabel("Rule 1 address or network").fill("198.51.100.0/24");
    await page.getByRole("button", { name: "Save group" }).click();
    await page.getByText("Group staff saved").waitFor();
    await page.locator("#t-to").fill("198.51.100.2");
    await page.locator("#t-proto").selectOption("icmp");
    await page.getByRole("button", { name: "Trace" }).click();
    await page.locator("#trace-result", { hasText: "allowed by rule 1" }).waitFor();
    await shot(page, "6-group-trace");
  }, 30_000);

  test("every page renders without console errors, every field has a label, and nothing overflows at desktop or phone width", async () => {
    const unlabelled = () =>
      page.evaluate(() =>
        [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
          .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute("aria-label"))
          .map((el) => `${el.tagName} ${el.getAttribute("name")}`),
      );
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 1280 ? 800 : 844 });
      for (const path of PAGES) {
        await page.goto(`${UI}${path}`);
        await page.locator("h1").waitFor();
        expect(await unlabelled(), path).toEqual([]);
        expect(await overflow(), `${path} at ${width} px`).toBeLessThanOrEqual(0);
      }
    }
    for (const path of ["", "/connections", "/groups/staff"]) {
      await page.goto(`${UI}${path}`);
      await shot(page, `7-phone${path.replace(/\//g, "-") || "-dashboard"}`);
    }
    // Keyboard: the first Tab reaches "Skip to content", the next the navigation.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${UI}/users`);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Dashboard");
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(problems).toEqual([]);
  }, 60_000);

  test("a read admin sees every page without change buttons, and a forged change is refused", async () => {
    await page.goto(`${UI}/admins`);
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("rita");
    await page.getByLabel("Role").selectOption("read");
    await page.getByLabel("Password (at least 8 characters)").fill("rita-pass-1234");
    await page.getByRole("button", { name: "Add admin" }).click();
    await page.getByText("Admin rita added (read).").waitFor();
    // rita gets one-time codes: the QR code once, then a code from the "app" checks it.
    await page.locator("tbody tr", { hasText: "rita" }).getByRole("button", { name: "Enrol OTP" }).click();
    const secret = (await page.locator(".qr code").textContent()) ?? "";
    await page.getByLabel("The code the app shows now").fill(codeAt(secret, Date.now()));
    await page.getByRole("button", { name: "Check code" }).click();
    await page.getByText("The code is right: rita signs in with a one-time code from now on.").waitFor();

    const reader = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    const rp = await reader.newPage();
    const readerProblems: string[] = [];
    watch(rp, readerProblems);
    await rp.goto(`${UI}/sign-in`);
    await rp.getByLabel("Name").fill("rita");
    await rp.getByLabel("Password").fill("rita-pass-1234");
    await rp.getByRole("button", { name: "Sign in", exact: true }).click();
    // The password alone is not enough: the form asks for the code (the next one: the check spent the current).
    await rp.getByText("enter the 6-digit code from your authenticator app").waitFor();
    await rp.getByLabel("Password").fill("rita-pass-1234");
    await rp.getByLabel("One-time code").fill(codeAt(secret, Date.now() + 30_000));
    await rp.getByRole("button", { name: "Sign in", exact: true }).click();
    await rp.getByText("rita (read only)").waitFor();
    for (const path of PAGES) {
      await rp.goto(`${UI}${path}`);
      await rp.locator("h1").waitFor();
      for (const label of CHANGE_BUTTONS) expect(await rp.getByRole("button", { name: label, exact: true }).count(), `${path} ${label}`).toBe(0);
    }
    await shot(rp, "8-read-admin-users");
    expect(readerProblems).toEqual([]);
    // The server refuses anyway: a POST with the session's own CSRF token.
    const forged = await rp.evaluate(async () => {
      const csrf = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
      const body = new URLSearchParams({ _csrf: csrf, name: "mallory", password: "mallory-pass-1", groups: "" });
      const res = await fetch("/ui/users", { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
      return { status: res.status, text: await res.text() };
    });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("read-only account");
    await page.goto(`${UI}/users?q=mallory`);
    await page.getByText("0 user(s)").waitFor();
    await reader.close();
  }, 60_000);
});
