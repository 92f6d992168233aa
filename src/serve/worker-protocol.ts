import { z } from "zod";

/**
 * The control messages between gw serve and a worker process. Every message is one envelope:
 * a request (an id, an operation and its body), its answer or failure (the same id), a note
 * (one-way: counters, events) or `ready` (the worker's handlers are in place). The bodies are
 * checked against the operation's own schema, so each side trusts only what it validated.
 */
const id = z.number().int().nonnegative();
const op = z.string().min(1).max(64);

export const envelopeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("request"), id, op, body: z.unknown() }),
  z.object({ kind: z.literal("answer"), id, body: z.unknown() }),
  z.object({ kind: z.literal("failure"), id, code: z.string().max(64), message: z.string().max(4096) }),
  z.object({ kind: z.literal("note"), op, body: z.unknown() }),
  z.object({ kind: z.literal("ready") }),
]);
export type Envelope = z.infer<typeof envelopeSchema>;

/** The requests one side answers: each operation's body and answer. */
export type RequestOps = Record<string, { body: z.ZodType; answer: z.ZodType }>;
/** The notes one side takes: each operation's body. */
export type NoteOps = Record<string, z.ZodType>;
/** What one side receives (and so what the other side may send). */
export interface Direction {
  requests: RequestOps;
  notes: NoteOps;
}
/** The messages of one kind of worker, both ways. */
export interface Protocol {
  toWorker: Direction;
  toMain: Direction;
}

export type BodyOf<O extends RequestOps, K extends keyof O> = z.infer<O[K]["body"]>;
export type AnswerOf<O extends RequestOps, K extends keyof O> = z.infer<O[K]["answer"]>;

/** A short, loggable account of why a message was refused (zod's first issues, no payload). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(message)"}: ${issue.message}`)
    .join("; ");
}
