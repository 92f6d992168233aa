import { spawn, type ChildProcess } from "node:child_process";

/** A process the test started: its output is kept, and it is stopped by PID at the end. */
export interface Started {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Resolves when `text` appears in stdout or stderr (rejects after timeoutMs, with the output). */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
}

/** Tracks every process a test file starts so cleanup can stop exactly those, even on failure. */
export class ProcessGroup {
  private readonly started: Started[] = [];

  start(argv: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Started {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, LC_ALL: "C", ...options.env },
    });
    let out = "";
    let err = "";
    const waiters: (() => void)[] = [];
    const notify = () => waiters.splice(0).forEach((w) => w());
    child.stdout!.on("data", (d) => ((out += d), notify()));
    child.stderr!.on("data", (d) => ((err += d), notify()));
    child.stdin!.on("error", () => {});
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    // "close", not "exit": only then has all of the output been read.
    let closed = false;
    const exited = new Promise<number | null>((resolve) =>
      child.on("close", (code) => {
        closed = true;
        notify();
        resolve(code);
      }),
    );
    const started: Started = {
      child,
      stdout: () => out,
      stderr: () => err,
      exited,
      waitFor(text, timeoutMs = 20_000) {
        const seen = () => (typeof text === "string" ? (out + err).includes(text) : text.test(out + err));
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out waiting for ${text}\n--- stdout\n${out}\n--- stderr\n${err}`)), timeoutMs);
          const check = () => {
            if (seen()) {
              clearTimeout(timer);
              resolve();
            } else if (closed) {
              clearTimeout(timer);
              reject(new Error(`process exited (${child.exitCode ?? child.signalCode}) before ${text}\n--- stdout\n${out}\n--- stderr\n${err}`));
            } else waiters.push(check);
          };
          check();
        });
      },
    };
    this.started.push(started);
    return started;
  }

  /** SIGTERM, then SIGKILL after a grace period, for every process still running. */
  async stopAll(graceMs = 5000): Promise<void> {
    const running = this.started.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
    for (const s of running) s.child.kill("SIGTERM");
    await Promise.race([Promise.all(running.map((s) => s.exited)), new Promise((r) => setTimeout(r, graceMs))]);
    for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
  }
}
