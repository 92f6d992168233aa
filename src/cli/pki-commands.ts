import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { plainNameSchema } from "../control/names.ts";
import { GwError } from "../errors.ts";
import { createCertificateAuthority } from "../pki/ca.ts";
import { issueClientCertificate } from "../pki/client-cert.ts";
import { createCrl } from "../pki/crl.ts";
import { toPkcs12 } from "../pki/pkcs12.ts";
import { intOption, UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
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

const caCreate = command({
  name: "create",
  description: "Create a CA for client certificates (EC P-256): give ca-cert.pem to gw serve --client-ca",
  reach: "none",
  options: {
    out: { type: "string", description: "Directory for ca-cert.pem and ca-key.pem (created; existing files are never replaced)" },
    cn: { type: "string", description: "The CA's common name (default: gw client CA)" },
    days: { type: "string", description: "Validity in days (default 3650)" },
  },
  run({ options: o }) {
    const out = required(o.out, "--out");
    const days = positiveDays(o.days, 3650);
    const ca = createCertificateAuthority({ commonName: o.cn ?? "gw client CA", days });
    const [cert, key] = writeNewFiles(out, [
      { name: CA_CERT_FILE, data: ca.certPem },
      { name: CA_KEY_FILE, data: ca.keyPem, secret: true },
    ]);
    return { notes: [`CA created: ${cert} (gw serve --client-ca ${cert}), ${key} (keep it secret: it signs user certificates)`] };
  },
});

const clientIssue = command({
  name: "issue",
  description: "Issue a user's client certificate: PEM certificate and key, and a PKCS#12 for the client",
  reach: "none",
  options: {
    name: { type: "positional", required: true, description: "User name (written as the certificate's CN)" },
    ca: { type: "string", description: "The CA directory made by gw pki ca create" },
    out: { type: "string", description: "Directory for NAME-cert.pem, NAME-key.pem and NAME.p12" },
    email: { type: "string", description: "Email address for the subjectAltName (for --cert-user-attribute san-email)" },
    uid: { type: "string", description: "UID attribute in the subject (for --cert-user-attribute uid)" },
    days: { type: "string", description: "Validity in days (default 365)" },
    "p12-password-stdin": { type: "boolean", description: "Read the PKCS#12 password from standard input (default: a generated one, printed on stdout)" },
  },
  async run({ options: o }) {
    const name = o.name;
    // The name becomes file names: only plain names (a user with '/' in the name needs a certificate made elsewhere).
    if (!plainNameSchema.safeParse(name).success) throw new UsageError(`"${name}" cannot name certificate files: letters, digits, '.', '_', '@', '-'`);
    const caDir = required(o.ca, "--ca");
    const out = required(o.out, "--out");
    const days = positiveDays(o.days, 365);
    const given = o["p12-password-stdin"] ? await readSecretFromStdin() : undefined;
    if (given === "") throw new UsageError("--p12-password-stdin: standard input held no password");
    const password = given ?? randomBytes(12).toString("base64url");
    const ca = readCaDir(caDir);
    const issued = issueClientCertificate({ ca, commonName: name, email: o.email, uid: o.uid, days });
    const p12 = toPkcs12({ certPem: issued.certPem, keyPem: issued.keyPem, caPem: ca.certPem, password, friendlyName: name });
    const paths = writeNewFiles(out, [
      { name: `${name}-cert.pem`, data: issued.certPem },
      { name: `${name}-key.pem`, data: issued.keyPem, secret: true },
      { name: `${name}.p12`, data: p12, secret: true },
    ]);
    const done = [
      `certificate for ${name} issued, serial ${issued.serial}, valid ${days} days: ${paths.join(", ")}`,
      `openconnect --certificate ${paths[2]} (or --certificate ${paths[0]} --sslkey ${paths[1]})`,
    ];
    // A generated password is printed once, on stdout, after what was done.
    if (given !== undefined) return { notes: done };
    return { heading: [...done, "PKCS#12 password (shown once):"], view: { lines: [password] } };
  },
});

const crl = command({
  name: "crl",
  description: "Write the CA's revocation list (every serial to revoke, each time): gw serve --crl FILE",
  reach: "none",
  options: {
    ca: { type: "string", description: "The CA directory made by gw pki ca create" },
    revoke: { type: "string", repeatable: true, description: "Serial number (hex) of a certificate to revoke (repeatable)" },
    out: { type: "string", description: "The CRL file to write (PEM), for gw serve --crl" },
    days: { type: "string", description: "Days until the CRL must be replaced (default 30; after that no certificate of the CA is accepted)" },
  },
  run({ options: o }) {
    const caDir = required(o.ca, "--ca");
    const out = required(o.out, "--out");
    const days = positiveDays(o.days, 30);
    const serials = o.revoke;
    for (const s of serials) if (!/^[0-9a-fA-F:]{1,59}$/.test(s)) throw new UsageError(`--revoke ${s}: a serial number is hex, as gw pki client issue printed it`);
    const now = new Date();
    const pem = createCrl({ ca: readCaDir(caDir), revoked: serials.map((serial) => ({ serial, date: now })), nextUpdateDays: days });
    try {
      writeFileSync(out, pem, { mode: 0o644 });
    } catch (e) {
      throw new GwError("file_unwritable", `cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    return { notes: [`CRL written to ${out}: ${serials.length} revoked certificate(s), valid ${days} days (restart gw serve --crl ${out} to use it)`] };
  },
});

export const pkiCommand = group("pki", "Client certificates: create a CA, issue user certificates (PEM and PKCS#12), write a CRL", [
  group("ca", "The client CA", [caCreate]),
  group("client", "User certificates", [clientIssue]),
  crl,
]);
