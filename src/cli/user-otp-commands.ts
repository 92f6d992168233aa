import { chmodSync, writeFileSync } from "node:fs";
import { qrPng, qrTerminal } from "../control/auth/qr.ts";
import type { OtpEnrolment } from "../control/otp.ts";
import { GwError } from "../errors.ts";
import { apiChange } from "./api-commands.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";

const nameArg = { name: { type: "positional", required: true, description: "User name" } } as const;
const otpPath = (name: string) => `/api/v1/users/${encodeURIComponent(name)}/otp`;

/** The images hold the secret: readable by their owner only. */
export function writePrivate(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data, { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (e) {
    throw new GwError("file_unwritable", `cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

const enroll = command({
  name: "enroll",
  description: "Enrol a user for one-time codes: prints the otpauth:// URI, the secret and a QR code (shown once)",
  reach: "api",
  options: {
    ...nameArg,
    png: { type: "string", description: "Also write the QR code as a PNG image to this file (mode 0600)" },
    svg: { type: "string", description: "Also write the QR code as an SVG image to this file (mode 0600)" },
  },
  json: "JSON output: user, secret, uri, enrolledAt (no QR)",
  async run({ options: o, gw }) {
    const e = await gw.call<OtpEnrolment>("POST", otpPath(o.name), {});
    if (o.png) writePrivate(o.png, qrPng(e.uri));
    if (o.svg) writePrivate(o.svg, e.svg);
    const qr = qrTerminal(e.uri, { color: process.stdout.isTTY === true }).replace(/\n$/, "");
    return {
      data: { user: e.user, secret: e.secret, uri: e.uri, enrolledAt: e.enrolledAt },
      view: { lines: [e.uri, `secret: ${e.secret}`, qr] },
      notes: [`user ${e.user} enrolled for one-time codes: scan the QR code or type the secret into an authenticator app (TOTP, 30 s, 6 digits). It is not shown again.`],
    };
  },
});

const reset = apiChange({
  name: "reset",
  description: "Remove a user's OTP enrolment (groups requiring otp refuse them until enrolled again)",
  options: nameArg,
  request: (o) => ({ method: "DELETE", path: otpPath(o.name) }),
  done: (o) => `one-time codes of ${o.name} reset: enrol again with 'gw user otp enroll ${o.name}'`,
});

export const userOtpCommand = group("otp", "One-time codes (TOTP) of a user: enroll, reset", [enroll, reset]);
