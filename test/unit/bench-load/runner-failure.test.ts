/**
 * The runner fails loudly: against a fake gateway on loopback that refuses the login, or the
 * CONNECT, `run.ts` exits 1 and says why (the failure kind and the gateway's own words).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServer, type Server, type TLSSocket } from "node:tls";
import { formDocument, refusalDocument, successDocument } from "../../../src/front/auth-documents.ts";

const runner = resolve(import.meta.dir, "../../../scripts/bench/load/run.ts");
let dir: string;
let key: string;
let cert: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gw-load-test-"));
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", join(dir, "k.pem"), "-out", join(dir, "c.pem"), "-days", "1", "-subj", "/CN=localhost"], { stdio: "ignore" });
  key = readFileSync(join(dir, "k.pem"), "utf8");
  cert = readFileSync(join(dir, "c.pem"), "utf8");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Answer = (method: string, path: string, body: string) => string;

/** A TLS server answering each HTTP request on a connection with `answer` (Content-Length bodies only). */
async function fakeGateway(answer: Answer): Promise<{ port: number; server: Server }> {
  const server = createServer({ key, cert }, (socket: TLSSocket) => {
    let buf = "";
    socket.on("data", (d) => {
      buf += d.toString("latin1");
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const [method, path] = head.split(" ");
        const body = buf.slice(end + 4, end + 4 + length);
        buf = buf.slice(end + 4 + length);
        socket.write(answer(method!, path!, body));
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { port: (server.address() as { port: number }).port, server };
}

const ok200 = (body: string, cookies: string[] = [], extra: string[] = []) =>
  `HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\n${cookies.map((c) => `Set-Cookie: ${c}\r\n`).join("")}${extra.map((h) => `${h}\r\n`).join("")}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const loginForm = formDocument("xml", { authId: "main", message: "Log in", fields: [{ type: "text", name: "username", label: "U" }, { type: "password", name: "password", label: "P" }] }, "ctx");

function runLoad(port: number, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [runner, "--url", `https://127.0.0.1:${port}/`, "--processes", "1", "--sources", "127.0.0.1", "--dtls", "none", "--hold", "1", "--settle", "0", "--sessions", "3", ...extra];
  const child = spawn(process.execPath, args, { env: { ...process.env, LOAD_PASSWORD: "pw" } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((r) => child.on("close", (code) => r({ code, stdout, stderr })));
}

describe("run.ts against a gateway that refuses", () => {
  test("every login refused: exit 1, failure kind and the gateway's message", async () => {
    const { port, server } = await fakeGateway((_m, path) => ok200(path === "/" ? loginForm : refusalDocument("xml", "the gateway under test refuses everyone")));
    try {
      const r = await runLoad(port, ["--sessions", "60"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("load: FAILED");
      expect(r.stderr).toMatch(/login-refused \d+ \(e\.g\. session \d+ \(load0 from 127\.0\.0\.1\): the gateway under test refuses everyone\)/);
      // More than 10 failures: the rest of the ramp is not tried, and the run says so.
      expect(r.stderr).toMatch(/[1-9]\d* sessions not tried: the load processes stopped after too many failures/);
      expect(r.stderr).toContain("only 0 of 60 sessions held");
    } finally {
      server.close();
    }
  }, 30_000);

  test("logins accepted but every CONNECT answered 503: exit 1 with X-Reason", async () => {
    const { port, server } = await fakeGateway((method, path) => {
      if (method === "CONNECT") return "HTTP/1.1 503 Service Unavailable\r\nX-Reason: no addresses left in the pool\r\nConnection: close\r\n\r\n";
      return ok200(path === "/" ? loginForm : successDocument("xml", "TOKEN", "h"), path === "/" ? [] : ["webvpn=TOKEN; Secure"]);
    });
    try {
      const r = await runLoad(port);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("connect-refused 3");
      expect(r.stderr).toContain("no addresses left in the pool");
    } finally {
      server.close();
    }
  }, 30_000);

  test("the same fake gateway granting tunnels: exit 0 and every session held (the check above can pass)", async () => {
    const { port, server } = await fakeGateway((method, path) => {
      if (method === "CONNECT") return "HTTP/1.1 200 CONNECTED\r\nX-CSTP-Address: 10.9.0.5\r\nX-CSTP-Netmask: 255.255.255.0\r\nX-CSTP-MTU: 1400\r\nX-CSTP-DPD: 30\r\n\r\n";
      return ok200(path === "/" ? loginForm : successDocument("xml", "TOKEN", "h"), path === "/" ? [] : ["webvpn=TOKEN; Secure"]);
    });
    try {
      // The fake answers no echo: a long interval keeps the one echo sent inside its 10 s grace.
      const r = await runLoad(port, ["--ping-interval", "3600"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("held          CSTP 3, DTLS 0");
    } finally {
      server.close();
    }
  }, 30_000);

  test("a login refused with Retry-After (gw's busy password hasher) is tried again after it, and is no failure", async () => {
    let answers = 0;
    const { port, server } = await fakeGateway((method, path) => {
      if (method === "CONNECT") return "HTTP/1.1 200 CONNECTED\r\nX-CSTP-Address: 10.9.0.5\r\nX-CSTP-Netmask: 255.255.255.0\r\nX-CSTP-MTU: 1400\r\nX-CSTP-DPD: 30\r\n\r\n";
      if (path === "/") return ok200(loginForm);
      // The first four answers: busy, come back in a second.
      if (++answers <= 4) return ok200(refusalDocument("xml", "The gateway is busy: try again in a few seconds."), ["webvpn=; Secure"], ["Retry-After: 1"]);
      return ok200(successDocument("xml", "TOKEN", "h"), ["webvpn=TOKEN; Secure"]);
    });
    try {
      const r = await runLoad(port, ["--ping-interval", "3600"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("held          CSTP 3, DTLS 0");
      expect(r.stdout).toContain("deferred      4 logins refused with a Retry-After");
      expect(r.stdout).toContain("failures      none");
    } finally {
      server.close();
    }
  }, 30_000);
});
