import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import type { ClientCertificateInfo } from "../pki/verify-client-cert.ts";

/**
 * A connection's client certificate as a session worker checked it, on its way to the main
 * process's login flow (docs/architecture.md §7): the checked facts, or why it was refused.
 * The worker checks it (it holds the TLS connection, and the trust the main process gave it);
 * the login flow reads the same Result it would read in one process.
 */
const text = (max: number) => z.string().max(max);
const names = z.array(text(1024)).max(256);

export const wireCertificate = z.discriminatedUnion("ok", [
  z.object({
    ok: z.literal(true),
    subjectCN: text(1024).optional(),
    emails: names,
    subjectEmail: text(1024).optional(),
    uid: text(1024).optional(),
    dnsNames: names,
    serial: text(256),
    subject: text(8192),
    issuer: text(8192),
    /** ISO 8601. */
    notAfter: text(64),
  }),
  z.object({ ok: z.literal(false), code: text(64), message: text(4096) }),
]);
export type WireCertificate = z.infer<typeof wireCertificate>;

export function certificateToWire(result: Result<ClientCertificateInfo>): WireCertificate {
  if (!result.ok) return { ok: false, code: result.error.code, message: result.error.message };
  const { notAfter, ...facts } = result.value;
  return { ok: true, ...facts, notAfter: notAfter.toISOString() };
}

export function certificateFromWire(wire: WireCertificate): Result<ClientCertificateInfo> {
  if (!wire.ok) return err(wire.code, wire.message);
  const { ok: _, notAfter, ...facts } = wire;
  return ok({ ...facts, notAfter: new Date(notAfter) });
}
