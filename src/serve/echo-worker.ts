import { fstatSync, writeSync } from "node:fs";
import { createServer } from "node:net";
import { z } from "zod";
import { err, ok } from "../errors.ts";
import type { WorkerRole } from "./worker-role.ts";

const fdNumber = z.number().int().min(3).max(1023);

/**
 * A worker that proves the plumbing, used by the tests (and handy to try a machine): it echoes,
 * reports the descriptors it got, writes through one, serves a handed listening socket and
 * forwards a question to the main process.
 */
export const echoProtocol = {
  toWorker: {
    requests: {
      echo: { body: z.object({ text: z.string().max(65_536) }), answer: z.object({ text: z.string(), index: z.number(), pid: z.number() }) },
      fds: { body: z.object({}), answer: z.object({ fds: z.array(z.object({ fd: z.number(), kind: z.string() })) }) },
      write: { body: z.object({ fd: fdNumber, text: z.string().max(4096) }), answer: z.object({ bytes: z.number() }) },
      /** Accepts on a handed listening TCP socket; each connection gets "worker <index> pid <pid>\n". */
      serve: { body: z.object({ fd: fdNumber }), answer: z.object({ port: z.number() }) },
      /** How this worker would start another copy of its program (selfArgv): checks the detection per build. */
      self: { body: z.object({}), answer: z.object({ argv: z.array(z.string()) }) },
      /** Asks the main process `lookup` and answers with its reply. */
      ask: { body: z.object({ text: z.string().max(4096) }), answer: z.object({ text: z.string() }) },
    },
    notes: {},
  },
  toMain: {
    requests: { lookup: { body: z.object({ text: z.string().max(4096) }), answer: z.object({ text: z.string() }) } },
    notes: {},
  },
};

export const echoRole: WorkerRole<typeof echoProtocol> = {
  protocol: echoProtocol,
  start: ({ index, fds, main, selfArgv }) => ({ handlers: {
    echo: ({ text }) => ok({ text, index, pid: process.pid }),
    fds: () => ok({ fds: fds.map((fd) => ({ fd, kind: kindOf(fd) })) }),
    self: () => ok({ argv: [...selfArgv] }),
    write: ({ fd, text }) => {
      try {
        return ok({ bytes: writeSync(fd, text) });
      } catch (e) {
        return err("worker_write_failed", `cannot write to descriptor ${fd}: ${(e as Error).message}`);
      }
    },
    serve: ({ fd }) =>
      new Promise((resolve) => {
        const server = createServer((socket) => socket.end(`worker ${index} pid ${process.pid}\n`));
        server.once("error", (e) => resolve(err("worker_listen_failed", `cannot accept on descriptor ${fd}: ${e.message}`)));
        server.listen({ fd }, () => {
          const address = server.address();
          resolve(ok({ port: typeof address === "object" && address ? address.port : 0 }));
        });
      }),
    ask: async ({ text }) => {
      const answer = await main.request("lookup", { text });
      return answer.ok ? ok({ text: answer.value.text }) : answer;
    },
  } }),
};

function kindOf(fd: number): string {
  try {
    const s = fstatSync(fd);
    return s.isSocket() ? "socket" : s.isFIFO() ? "pipe" : s.isFile() ? "file" : s.isCharacterDevice() ? "char-device" : "other";
  } catch (e) {
    return `none (${(e as NodeJS.ErrnoException).code ?? "error"})`;
  }
}
