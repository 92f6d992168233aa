import { defineCommand, type ArgsDef } from "citty";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { storedSettingsDocument } from "../control/settings.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import { gatewayConfigSchema, type GatewayConfig } from "../config/gateway-config.ts";
import { overlayFlags, serveArgsDef, settingsFromFlags } from "../config/serve-flags.ts";
import { validationError } from "../control/zod-errors.ts";
import { err, GwError, ok, type Result } from "../errors.ts";
import { logLine, type Log } from "../log/log-line.ts";
import { createJsonLogSink } from "../log/json-log-sink.ts";
import { createLogSink } from "../log/log-sink.ts";
import { runtime } from "../runtime/current.ts";
import { startGateway } from "../serve/gateway.ts";
import { takeDataDir } from "../serve/take-data-dir.ts";
import { memoryReport } from "../serve/memory-report.ts";
import { describeFirstAdmin } from "../control/first-admin.ts";
import { rejectUnknownOptions, UsageError } from "./args.ts";
import { dataDirFrom } from "./data-dir-arg.ts";

/** Why gw serve stops: a signal or a drain's end (exit 0), or a lost TUN device (`fails`: exit 1). */
interface StopCause {
  why: string;
  fails: boolean;
}

/** Every option is a settings-table row (src/config/settings-table.ts): its name, help and parsing. */
const serveArgs = serveArgsDef() as ArgsDef;

export const serveCommand = defineCommand({
  meta: { name: "serve", description: "Run the gateway (TLS/CSTP on TCP 443, DTLS on UDP 443, TUN device, SQLite store, management API on TCP 8443 on loopback and the tunnel address)" },
  args: serveArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, serveArgs);
    // Every file this process creates (store, WAL, keys, api.json, lock) is its user's alone.
    process.umask(0o077);
    // Text until the settings are read; then the format they ask for (--log-format json).
    const sinks = { text: createLogSink((line) => console.error(line), Date.now), json: createJsonLogSink((line) => console.error(line), Date.now) };
    let sink: Log = sinks.text;
    const log: Log = (message) => sink(message);
    const { fileLocks, passwordHasher, openTun, openUdp, raiseOpenFileLimit, serveHttps, createGcmKey, openRawTcp } = runtime;
    const taken = await takeDataDir(dataDirFrom(args as { "data-dir"?: string }), { locks: fileLocks, uid: process.getuid?.() ?? 0, pid: process.pid, log });
    if (!taken.ok) throw taken.error;
    const { config, flagged } = parseServeConfig(args, rawArgs, taken.value.path);
    sink = sinks[config.logFormat];
    // Listen for the stop signals before anything is announced: a SIGTERM right after the ready
    // line must stop the gateway cleanly, not kill it before a handler exists.
    const signalled = new Promise<StopCause>((resolve) => {
      process.once("SIGINT", () => resolve({ why: "SIGINT", fails: false }));
      process.once("SIGTERM", () => resolve({ why: "SIGTERM", fails: false }));
    });
    // SIGHUP: reload in place (certificate, key, CA, CRL, settings), sessions kept; ignored while starting.
    let onHangup = () => log(logLine`SIGHUP while starting: ignored`);
    process.on("SIGHUP", () => onHangup());
    let drained: (how: string) => void = () => {};
    const drainedPromise = new Promise<StopCause>((resolve) => (drained = (how) => resolve({ why: `drain:${how}`, fails: false })));
    // The TUN device stopped for good (deleted, a failed read): stop, and fail, so that the
    // service manager (deploy/gw.service: Restart=on-failure) starts gw again with a new device.
    let tunLost: (why: string) => void = () => {};
    const tunLostPromise = new Promise<StopCause>((resolve) => (tunLost = (why) => resolve({ why: `the TUN device stopped delivering packets (${why})`, fails: true })));
    const reread = (): Result<GatewayConfig> => {
      try {
        return ok(parseServeConfig(args, rawArgs, taken.value.path).config);
      } catch (e) {
        return e instanceof GwError ? { ok: false, error: e } : err("invalid_config", (e as Error).message);
      }
    };
    const started = await startGateway(config, {
      openTun,
      openUdp,
      openWorkerKernel: runtime.openWorkerKernel,
      workerProcesses: runtime.workerProcesses,
      createGcmKey,
      openRawTcp,
      hasher: passwordHasher,
      raiseOpenFileLimit,
      serveHttps,
      log,
      flagged,
      reread,
      onDrained: (how) => drained(how),
      onTunLost: (why) => tunLost(why),
    });
    if (!started.ok) {
      taken.value.lock.release();
      throw started.error;
    }
    const gateway = started.value;
    if (gateway.adminToken) {
      console.log(`admin API token (shown once; store it now): ${gateway.adminToken}`);
    }
    if (gateway.firstAdmin) console.log(describeFirstAdmin(gateway.firstAdmin, `${gateway.api.url}/ui`));
    console.log(`management API: ${gateway.api.url} (gw --url ${gateway.api.url} --pin ${gateway.pin})`);
    console.log(`management API listens on: ${gateway.api.described}`);
    console.log(`web UI: ${gateway.api.url}/ui (in a browser; sign in with an admin account or an API token)`);
    console.log(`server certificate pin: ${gateway.pin}`);
    onHangup = () => void gateway.reload("sighup");
    // SIGUSR2: collect garbage and log what memory is left and what holds it (docs/cli.md).
    process.on("SIGUSR2", () => {
      log(memoryReport(runtime.memory, gateway.plane));
      gateway.collectWorkers?.();
    });
    const cause = await Promise.race([signalled, drainedPromise, tunLostPromise]);
    log(cause.fails ? logLine`${cause.why}: stopping, ending all sessions (exit status 1)` : logLine`${cause.why}: stopping, ending all sessions`);
    await gateway.stop();
    taken.value.lock.release();
    // Exit status 1 with the reason on stderr ("gw: tun_lost: ...").
    if (cause.fails) throw new GwError("tun_lost", `${cause.why}: gw stopped; start it again (a service manager with Restart=on-failure does)`);
  },
});

/**
 * The settings of this run: the document stored in the data directory (`gw config set`), with
 * the flags given on the command line on top (a flag wins for this run only).
 */
function parseServeConfig(args: Record<string, unknown>, rawArgs: readonly string[], dataDir: string): { config: GatewayConfig; flagged: string[] } {
  const fromFlags = settingsFromFlags(args, rawArgs);
  if (!fromFlags.ok) throw new UsageError(fromFlags.error.message);
  const combined = overlayFlags(readStoredDocument(dataDir), fromFlags.value);
  const parsed = gatewayConfigSchema.safeParse({ ...combined, dataDir });
  if (!parsed.success) {
    const r = validationError(parsed.error, "configuration");
    throw r.ok ? new GwError("invalid_config", "invalid configuration") : new GwError("invalid_config", r.error.message, r.error.details);
  }
  return { config: parsed.data, flagged: Object.keys(fromFlags.value) };
}

/** The stored settings document, if the data directory has a store already (nothing is created here). */
export function readStoredDocument(dataDir: string): Record<string, unknown> {
  if (!existsSync(join(dataDir, "gw.db"))) return {};
  const store = openSqliteStore(join(dataDir, "gw.db"));
  if (!store.ok) throw store.error;
  try {
    const doc = storedSettingsDocument(store.value);
    if (!doc.ok) throw doc.error;
    return { ...doc.value };
  } finally {
    store.value.close();
  }
}
