/**
 * Runs N XML logins at once (openconnect's documents, docs/protocol.md §2) and stops at the
 * session token: no CONNECT, so what is measured is the login, mostly the password hash. Prints
 * one JSON line: each login's time, the wall time, refusals with their messages. Run inside the
 * client namespace by scripts/bench/login-storm.ts.
 *   bun login-storm-client.ts URL USER_PREFIX COUNT SOURCES(comma-separated)   (password in LOGIN_PASSWORD)
 */
import { request } from "node:https";
import { answerForm, authReplyBody, initBody, parseAuthAnswer, type AuthAnswer } from "./xml-auth.ts";
import { USER_AGENT } from "./connect-request.ts";

const [url, userPrefix, countText, sourcesText] = process.argv.slice(2);
const password = process.env.LOGIN_PASSWORD ?? "";
const count = Number(countText);
const sources = (sourcesText ?? "").split(",").filter(Boolean);
if (!url || !userPrefix || !(count > 0) || sources.length === 0) {
  console.error("usage: login-storm-client.ts URL USER_PREFIX COUNT SOURCES (LOGIN_PASSWORD in the environment)");
  process.exit(2);
}

function post(path: string, body: string, cookies: Map<string, string>, localAddress: string): Promise<{ status: number; setCookies: string[]; body: string }> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port || 443,
        path: target.pathname,
        method: "POST",
        localAddress,
        rejectUnauthorized: false,
        agent: false,
        headers: {
          "user-agent": USER_AGENT,
          "x-transcend-version": "1",
          "x-aggregate-auth": "1",
          "content-type": "application/xml; charset=utf-8",
          ...(cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, setCookies: res.headers["set-cookie"] ?? [], body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** One login: init, then answer forms until success or refusal. Resolves with its time, or a failure. */
async function login(index: number): Promise<{ ms: number; failure?: string }> {
  const started = performance.now();
  const cookies = new Map<string, string>();
  const user = `${userPrefix}${index}`;
  const source = sources[index % sources.length]!;
  try {
    let reply = await post("/", initBody(url!), cookies, source);
    for (let step = 0; step < 4; step++) {
      for (const c of reply.setCookies) {
        const m = /^([^=;\s]+)=([^;]*)/.exec(c);
        if (m) m[2] ? cookies.set(m[1]!, m[2]) : cookies.delete(m[1]!);
      }
      const parsed = parseAuthAnswer(reply.status, reply.setCookies, reply.body);
      if (!parsed.ok) return { ms: performance.now() - started, failure: parsed.error.message };
      const a: AuthAnswer = parsed.value;
      if (a.kind === "success") return { ms: performance.now() - started };
      if (a.kind === "refused") return { ms: performance.now() - started, failure: a.message };
      if (a.error && step > 0) return { ms: performance.now() - started, failure: a.error };
      const answers = answerForm(a.fields, user, password);
      if (!answers.ok) return { ms: performance.now() - started, failure: answers.error.message };
      reply = await post(a.action, authReplyBody(a.opaque, answers.value), cookies, source);
    }
    return { ms: performance.now() - started, failure: "still prompted after 4 answers" };
  } catch (e) {
    return { ms: performance.now() - started, failure: (e as Error).message };
  }
}

const t0 = performance.now();
const results = await Promise.all(Array.from({ length: count }, (_, i) => login(i)));
const wallMs = performance.now() - t0;
const failures = results.flatMap((r) => (r.failure ? [r.failure] : []));
console.log(JSON.stringify({ wallMs, loginMs: results.filter((r) => !r.failure).map((r) => r.ms), failures }));
