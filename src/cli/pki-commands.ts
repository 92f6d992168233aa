import { defineCommand } from "citty";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { userNameSchema } from "../control/names.ts";
import { GwError } from "../errors.ts";
import { createCertificateAuthority } from "../pki/ca.ts";
import { issueClientCertificate } from "../pki/client-cert.ts";
import { createCrl } from "../pki/crl.ts";
import { toPkcs12 } from "../pki/pkcs12.ts";
import { intOption, rejectUnknownOptions, repeated, UsageError } from "./args.ts";
import { CA_CERT_FILE, CA_KEY_FILE, readCaDir, writeNewFiles } from "./pki-files.ts";
import { readSecretFromStdin } from "./stdin.ts";

/** Offline helpers for operators: a client CA, user certificates, a CRL. No server or store involved. */

function positiveDays(value: unknown, fallback: number): number {
  const days = intOption(value, "days") ?? fallback;
  if (days <= 0 || days > 36500) throw new UsageError(`--days must be between 1 and 36500, got ${days}`);
  return days;
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

const caCreateArgs = {
  out: { type: "string", description: "Directory for ca-cert.pem and ca-key.pem (created; existing files are never replaced)" },
  cn: { type: "string", description: "The CA's common name (default: gw client CA)" },
  days: { type: "string", description: "Validity in days (default 3650)" },
} as const;

const caCreate = defineCommand({
  meta: { name: "create", description: "Create a CA for client certificates (EC P-256): give ca-cert.pem to gw serve --client-ca" },
  args: caCreateArgs,
  run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, caCreateArgs);
    const out = required(args.out, "--out");
    const days = positiveDays(args.days, 3650);
    const ca = createCertificateAuthority({ commonName: args.cn ?? "gw client CA", days });
    const [cert, key] = writeNewFiles(out, [
      { name: CA_CERT_FILE, data: ca.certPem },
      { name: CA_KEY_FILE, data: ca.keyPem, secret: true },
    ]);
    console.error(`CA created: ${cert} (gw serve --client-ca ${cert}), ${key} (keep it secret: it signs user certificates)`);
  },
});

const issueArgs = {
  name: { type: "positional", required: true, description: "User name (written as the certificate's CN)" },
  ca: { type: "string", description: "The CA directory made by gw pki ca create" },
  out: { type: "string", description: "Directory for NAME-cert.pem, NAME-key.pem and NAME.p12" },
  email: { type: "string", description: "Email address for the subjectAltName (for --cert-user-attribute san-email)" },
  uid: { type: "string", description: "UID attribute in the subject (for --cert-user-attribute uid)" },
  days: { type: "string", description: "Validity in days (default 365)" },
  "p12-password-stdin": { type: "boolean", description: "Read the PKCS#12 password from standard input (default: a generated one, printed on stdout)" },
} as const;

const clientIssue = defineCommand({
  meta: { name: "issue", description: "Issue a user's client certificate: PEM certificate and key, and a PKCS#12 for the client" },
  args: issueArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, issueArgs);
    const name = args.name;
    if (!userNameSchema.safeParse(name).success) throw new UsageError(`"${name}" is not a user name: letters, digits, '.', '_', '@', '-'`);
    const caDir = required(args.ca, "--ca");
    const out = required(args.out, "--out");
    const days = positiveDays(args.days, 365);
    let password: string;
    let generated = false;
    if (args["p12-password-stdin"]) {
      password = await readSecretFromStdin();
      if (!password) throw new UsageError("--p12-password-stdin: standard input held no password");
    } else {
      password = randomBytes(12).toString("base64url");
      generated = true;
    }
    const ca = readCaDir(caDir);
    const issued = issueClientCertificate({ ca, commonName: name, email: args.email, uid: args.uid, days });
    const p12 = toPkcs12({ certPem: issued.certPem, keyPem: issued.keyPem, caPem: ca.certPem, password, friendlyName: name });
    const paths = writeNewFiles(out, [
      { name: `${name}-cert.pem`, data: issued.certPem },
      { name: `${name}-key.pem`, data: issued.keyPem, secret: true },
      { name: `${name}.p12`, data: p12, secret: true },
    ]);
    console.error(`certificate for ${name} issued, serial ${issued.serial}, valid ${days} days: ${paths.join(", ")}`);
    console.error(`openconnect --certificate ${paths[2]} (or --certificate ${paths[0]} --sslkey ${paths[1]})`);
    if (generated) {
      console.error("PKCS#12 password (shown once):");
      console.log(password);
    }
  },
});

const crlArgs = {
  ca: { type: "string", description: "The CA directory made by gw pki ca create" },
  revoke: { type: "string", description: "Serial number (hex) of a certificate to revoke (repeatable)" },
  out: { type: "string", description: "The CRL file to write (PEM), for gw serve --crl" },
  days: { type: "string", description: "Days until the CRL must be replaced (default 30; after that no certificate of the CA is accepted)" },
} as const;

const crl = defineCommand({
  meta: { name: "crl", description: "Write the CA's revocation list (every serial to revoke, each time): gw serve --crl FILE" },
  args: crlArgs,
  run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, crlArgs);
    const caDir = required(args.ca, "--ca");
    const out = required(args.out, "--out");
    const days = positiveDays(args.days, 30);
    const serials = repeated(rawArgs, "revoke");
    for (const s of serials) if (!/^[0-9a-fA-F:]{1,59}$/.test(s)) throw new UsageError(`--revoke ${s}: a serial number is hex, as gw pki client issue printed it`);
    const now = new Date();
    const pem = createCrl({ ca: readCaDir(caDir), revoked: serials.map((serial) => ({ serial, date: now })), nextUpdateDays: days });
    try {
      writeFileSync(out, pem, { mode: 0o644 });
    } catch (e) {
      throw new GwError("file_unwritable", `cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    console.error(`CRL written to ${out}: ${serials.length} revoked certificate(s), valid ${days} days (restart gw serve --crl ${out} to use it)`);
  },
});

export const pkiCommand = defineCommand({
  meta: { name: "pki", description: "Client certificates: create a CA, issue user certificates (PEM and PKCS#12), write a CRL" },
  subCommands: {
    ca: defineCommand({ meta: { name: "ca", description: "The client CA" }, subCommands: { create: caCreate } }),
    client: defineCommand({ meta: { name: "client", description: "User certificates" }, subCommands: { issue: clientIssue } }),
    crl,
  },
});
