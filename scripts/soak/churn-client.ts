/**
 * Soak load: LOOPS concurrent loops, each logging in (urlencoded, the spec's flow), opening a
 * CSTP tunnel, holding it a few seconds with DPD, then ending it (DISCONNECT, or an abrupt close
 * for one in four), until SECONDS pass. One login in BAD_EVERY uses a wrong password. Loop i
 * connects from ADDRESSES[i % n] (comma-separated): the gateway admits at most 32 connections not
 * yet a tunnel per client address, so a big soak comes from several.
 *   bun churn-client.ts HOST USER_PREFIX USERS PASSWORD LOOPS SECONDS BAD_EVERY ADDRESSES
 * Prints one JSON line at the end: counts of every outcome (anything unexpected is listed).
 */
import { urlencodedLogin } from "../../test/e2e/fixtures/urlencoded-login.ts";
import { connect, type ConnectionOptions } from "node:tls";

const [host, prefix, usersText, password, loopsText, secondsText, badEveryText, addressesText] = process.argv.slice(2) as string[];
const addresses = addressesText!.split(",");
const users = Number(usersText);
const loops = Number(loopsText);
const deadline = Date.now() + Number(secondsText) * 1000;
const badEvery = Number(badEveryText);
const counts: Record<string, number> = {};
const unexpected: string[] = [];
const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const login = (user: string, pass: string, localAddress: string) => urlencodedLogin({ host: host!, user, password: pass, localAddress });

/** CONNECT, hold with a DPD request every second, then DISCONNECT or drop. */
function tunnel(token: string, holdMs: number, abrupt: boolean, localAddress: string): Promise<string> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: string) => {
      if (done) return;
      done = true;
      clearInterval(dpd);
      clearTimeout(hold);
      resolve(outcome);
    };
    // node:tls hands localAddress to net.connect; its type does not list it.
    const socket = connect({ host, port: 443, localAddress, rejectUnauthorized: false } as ConnectionOptions, () => {
      socket.write(`CONNECT /CSCOSSLC/tunnel HTTP/1.1\r\nHost: ${host}\r\nCookie: webvpn=${token}\r\nX-CSTP-Version: 1\r\nX-CSTP-Address-Type: IPv4\r\n\r\n`);
    });
    let head = "";
    let dpd: ReturnType<typeof setInterval> | undefined;
    let hold: ReturnType<typeof setTimeout> | undefined;
    const onData = (d: Buffer) => {
      head += d.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      socket.on("data", () => {});
      if (!head.startsWith("HTTP/1.1 200")) {
        socket.destroy();
        return finish(`connect refused: ${head.split("\r\n")[0]}`);
      }
      // STF 1, type 3 = DPD request.
      dpd = setInterval(() => socket.write(Buffer.from([0x53, 0x54, 0x46, 0x01, 0, 0, 3, 0])), 1000);
      hold = setTimeout(() => {
        if (abrupt) socket.destroy();
        else socket.end(Buffer.from([0x53, 0x54, 0x46, 0x01, 0, 1, 5, 0, 0xb0])); // DISCONNECT
        finish(abrupt ? "tunnel dropped" : "tunnel disconnected");
      }, holdMs);
    };
    socket.on("data", onData);
    socket.on("error", (e) => finish(`tunnel error: ${e.message}`));
    socket.on("close", () => finish("tunnel closed by gateway"));
  });
}

async function loop(i: number): Promise<void> {
  for (let n = 0; Date.now() < deadline; n++) {
    const user = `${prefix}${(i + n) % users}`;
    const bad = (i * 7 + n) % badEvery === 0;
    const from = addresses[i % addresses.length]!;
    const r = await login(user, bad ? "wrong-password" : password, from);
    if (bad) {
      if (r.token) unexpected.push(`bad password accepted for ${user}`);
      count(r.token ? "bad login accepted" : "bad login refused");
      await sleep(200);
      continue;
    }
    if (!r.token) {
      count("login failed");
      if (unexpected.length < 20) unexpected.push(`${user}: ${r.error}`);
      await sleep(1000);
      continue;
    }
    count("login ok");
    const outcome = await tunnel(r.token, 2000 + ((i * 131 + n * 17) % 6000), (i + n) % 4 === 0, from);
    count(outcome);
    if (!outcome.startsWith("tunnel d") && unexpected.length < 20) unexpected.push(`${user}: ${outcome}`);
  }
}

await Promise.all(Array.from({ length: loops }, (_, i) => sleep(i * 20).then(() => loop(i))));
console.log(JSON.stringify({ counts, unexpected }));
process.exit(0);
