/**
 * Stage 1 of the session workers composed (docs/architecture.md §7): this process opens a steered
 * TCP group of two members on 127.0.0.1, starts two echo workers of `src/main.ts __worker` with the
 * supervisor, hands each its member (fd 3) and has it accept there. Clients from 20 source
 * addresses (127.0.0.10-29) connect; each answer names the worker that accepted. Then worker 0 is
 * SIGKILLed, restarted with the same descriptor, and the clients connect again. Prints one JSON line.
 * argv: <JSON argv prefix of the workers>.
 */
import { connect } from "node:net";
import { runtime } from "../../src/runtime/current.ts";
import { loadReuseportLibc } from "../../src/runtime/reuseport-libc.ts";
import { openSteeredGroup } from "../../src/runtime/linux/steered-group.ts";
import { steeringIndex } from "../../src/runtime/linux/reuseport-steering.ts";
import { echoProtocol } from "../../src/serve/echo-worker.ts";
import { workerArgv } from "../../src/serve/worker-argv.ts";
import { createWorkerSupervisor, type WorkerEvent } from "../../src/serve/worker-supervisor.ts";

const prefix = JSON.parse(process.argv[2]!) as string[];
const libc = await loadReuseportLibc();
if (!libc.ok) throw libc.error;
const group = openSteeredGroup(libc.value, { host: "127.0.0.1", port: 0, members: 2, kind: "tcp" });
if (!group.ok) throw group.error;
const { fds, port } = group.value;

const events: WorkerEvent[] = [];
const logs: string[] = [];
const supervisor = createWorkerSupervisor({
  count: 2,
  argv: (index) => workerArgv(prefix, { role: "echo", index, parentPid: process.pid, fdCount: 1 }),
  fds: (index) => [fds[index]!],
  spawn: runtime.workerProcesses.spawn,
  protocol: echoProtocol,
  handlers: () => ({ lookup: ({ text }) => ({ ok: true, value: { text } }) }),
  onEvent: (e) => events.push(e),
  log: (line) => logs.push(line),
  requestTimeoutMs: 10_000,
});
const started = supervisor.start();
if (!started.ok) throw started.error;

/** What the accepting worker says to a client from `source`: "worker <index> pid <pid>". */
function ask(source: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress: source });
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("end", () => resolve(text.trim()));
    socket.on("error", (e) => resolve(`error ${e.message}`));
    socket.setTimeout(5_000, () => socket.destroy(new Error("no answer in 5 s")));
  });
}

const sources = Array.from({ length: 20 }, (_, i) => `127.0.0.${10 + i}`);
async function round() {
  const answers = await Promise.all(sources.map(ask));
  return sources.map((source, i) => ({ source, expected: steeringIndex(source, 2), answer: answers[i]! }));
}

const serving = await Promise.all([0, 1].map((i) => supervisor.request(i, "serve", { fd: 3 })));
const first = await round();
const pidsBefore = [supervisor.pidOf(0), supervisor.pidOf(1)];

process.kill(pidsBefore[0]!, "SIGKILL");
const deadline = Date.now() + 10_000;
while (!events.some((e) => e.type === "started" && e.index === 0 && e.pid !== pidsBefore[0]) && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 20));
}
const servingAgain = await supervisor.request(0, "serve", { fd: 3 });
const second = await round();
const pidsAfter = [supervisor.pidOf(0), supervisor.pidOf(1)];
await supervisor.stop(3_000);
console.log(JSON.stringify({ port, serving, first, pidsBefore, servingAgain, second, pidsAfter, logs }));
process.exit(0);
