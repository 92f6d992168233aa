import { qrPng, qrTerminal } from "../control/auth/qr.ts";
import type { AdminOtpEnrolment } from "../control/admins.ts";
import { apiChange } from "./api-commands.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { writePrivate } from "./user-otp-commands.ts";

const nameArg = { name: { type: "positional", required: true, description: "Admin account name" } } as const;
const otpPath = (name: string) => `/api/v1/admins/${encodeURIComponent(name)}/otp`;

const enroll = command({
  name: "enroll",
  description: "Enrol a web UI account for one-time codes at sign-in: prints the otpauth:// URI, the secret and a QR code (shown once)",
  reach: "api",
  options: {
    ...nameArg,
    png: { type: "string", description: "Also write the QR code as a PNG image to this file (mode 0600)" },
    svg: { type: "string", description: "Also write the QR code as an SVG image to this file (mode 0600)" },
  },
  json: "JSON output: admin, secret, uri, enrolledAt (no QR)",
  async run({ options: o, gw }) {
    const e = await gw.call<AdminOtpEnrolment>("POST", otpPath(o.name), {});
    if (o.png) writePrivate(o.png, qrPng(e.uri));
    if (o.svg) writePrivate(o.svg, e.svg);
    const qr = qrTerminal(e.uri, { color: process.stdout.isTTY === true }).replace(/\n$/, "");
    return {
      data: { admin: e.admin, secret: e.secret, uri: e.uri, enrolledAt: e.enrolledAt },
      view: { lines: [e.uri, `secret: ${e.secret}`, qr] },
      notes: [`admin ${e.admin} enrolled for one-time codes: scan the QR code or type the secret into an authenticator app (TOTP, 30 s, 6 digits); signing in to the web UI now needs a code. It is not shown again.`],
    };
  },
});

const reset = apiChange({
  name: "reset",
  description: "Remove a web UI account's one-time codes (a password alone signs in again)",
  options: nameArg,
  request: (o) => ({ method: "DELETE", path: otpPath(o.name) }),
  done: (o) => `one-time codes of admin ${o.name} removed: enrol again with 'gw admin otp enroll ${o.name}'`,
});

export const adminOtpCommand = group("otp", "One-time codes (TOTP) of a web UI account: enroll, reset", [enroll, reset]);
