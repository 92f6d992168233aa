import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { err, ok, type Result } from "../errors.ts";
import { loadCertificatePair, pinSha256, type CertificatePair } from "../pki/pin.ts";
import { createSelfSignedCertificate } from "../pki/self-signed.ts";

export interface ServerCertificate extends CertificatePair {
  pin: string;
  /** Where it came from, for the startup log. */
  source: "generated" | "data-dir" | "files";
}

/**
 * The TLS certificate: --cert/--key when given; else the one in the data directory, generated
 * (self-signed EC P-256) on first start.
 */
export function obtainServerCertificate(dataDir: string, certFile?: string, keyFile?: string): Result<ServerCertificate> {
  if (certFile && keyFile) return readPair(certFile, keyFile, "files");
  const certPath = join(dataDir, "server-cert.pem");
  const keyPath = join(dataDir, "server-key.pem");
  if (existsSync(certPath) || existsSync(keyPath)) return readPair(certPath, keyPath, "data-dir");
  const pair = createSelfSignedCertificate({ commonName: "gw", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"] });
  try {
    writeFileSync(keyPath, pair.keyPem, { mode: 0o600 });
    writeFileSync(certPath, pair.certPem, { mode: 0o600 }); // the whole data directory is private
  } catch (e) {
    return err("cert_write_failed", `cannot write the generated certificate to ${dataDir}: ${(e as Error).message}`);
  }
  return ok({ ...pair, pin: pinSha256(pair.certPem), source: "generated" });
}

function readPair(certPath: string, keyPath: string, source: ServerCertificate["source"]): Result<ServerCertificate> {
  let certPem: string;
  let keyPem: string;
  try {
    certPem = readFileSync(certPath, "utf8");
  } catch (e) {
    return err("cert_unreadable", `cannot read certificate file ${certPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    keyPem = readFileSync(keyPath, "utf8");
  } catch (e) {
    return err("key_unreadable", `cannot read key file ${keyPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const pair = loadCertificatePair(certPem, keyPem);
  if (!pair.ok) {
    return err(pair.error.code, `${certPath}: ${pair.error.message}`);
  }
  return ok({ ...pair.value, pin: pinSha256(certPem), source });
}
