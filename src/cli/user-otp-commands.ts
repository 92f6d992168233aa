import { defineCommand } from "citty";
import { chmodSync, writeFileSync } from "node:fs";
import { qrPng, qrTerminal } from "../control/auth/qr.ts";
import type { OtpEnrolment } from "../control/otp.ts";
import { GwError } from "../errors.ts";
import { rejectUnknownOptions } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson } from "./output.ts";

const nameArg = { name: { type: "positional", required: true, description: "User name" } } as const;
const otpPath = (name: string) => `/api/v1/users/${encodeURIComponent(name)}/otp`;

/** The images hold the secret: readable by their owner only. */
function writePrivate(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data, { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (e) {
    throw new GwError("file_unwritable", `cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

const enrollArgs = {
  ...connectArgs,
  ...nameArg,
  json: { type: "boolean", description: "JSON output: user, secret, uri, enrolledAt (no QR)" },
  png: { type: "string", description: "Also write the QR code as a PNG image to this file (mode 0600)" },
  svg: { type: "string", description: "Also write the QR code as an SVG image to this file (mode 0600)" },
} as const;

const enroll = defineCommand({
  meta: { name: "enroll", description: "Enrol a user for one-time codes: prints the otpauth:// URI, the secret and a QR code (shown once)" },
  args: enrollArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, enrollArgs);
    const e = await withApi(args, (api) => api.call<OtpEnrolment>("POST", otpPath(args.name), {}));
    if (args.png) writePrivate(args.png, qrPng(e.uri));
    if (args.svg) writePrivate(args.svg, e.svg);
    if (args.json) return printJson({ user: e.user, secret: e.secret, uri: e.uri, enrolledAt: e.enrolledAt });
    console.log(e.uri);
    console.log(`secret: ${e.secret}`);
    process.stdout.write(qrTerminal(e.uri, { color: process.stdout.isTTY === true }));
    console.error(
      `user ${e.user} enrolled for one-time codes: scan the QR code or type the secret into an authenticator app (TOTP, 30 s, 6 digits). It is not shown again.`,
    );
  },
});

const resetArgs = { ...connectArgs, ...nameArg } as const;

const reset = defineCommand({
  meta: { name: "reset", description: "Remove a user's OTP enrolment (groups requiring otp refuse them until enrolled again)" },
  args: resetArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, resetArgs);
    await withApi(args, (api) => api.call("DELETE", otpPath(args.name)));
    console.error(`one-time codes of ${args.name} reset: enrol again with 'gw user otp enroll ${args.name}'`);
  },
});

export const userOtpCommand = defineCommand({
  meta: { name: "otp", description: "One-time codes (TOTP) of a user: enroll, reset" },
  subCommands: { enroll, reset },
});
