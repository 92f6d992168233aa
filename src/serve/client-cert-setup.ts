import { readFileSync } from "node:fs";
import { err, ok, type Result } from "../errors.ts";
import { loadClientCertTrust, type ClientCertTrust } from "../pki/client-cert-trust.ts";

/**
 * The client-certificate trust of `gw serve --client-ca FILE [--crl FILE]`, read and checked
 * once at startup (a bad file stops the start with one clear line). Undefined: no CA configured,
 * so no certificate is requested and certificate logins are impossible.
 */
export function loadClientCertFiles(caFile: string | undefined, crlFile: string | undefined): Result<ClientCertTrust | undefined> {
  if (caFile === undefined) return ok(undefined);
  const ca = readText(caFile, "client_ca_unreadable", "client CA");
  if (!ca.ok) return ca;
  const crl = crlFile === undefined ? ok(undefined) : readText(crlFile, "crl_unreadable", "CRL");
  if (!crl.ok) return crl;
  const trust = loadClientCertTrust(ca.value, crl.value);
  if (!trust.ok) {
    const file = trust.error.code.startsWith("crl_") ? crlFile : caFile;
    return err(trust.error.code, `${file}: ${trust.error.message}`);
  }
  return trust;
}

function readText(file: string, code: string, what: string): Result<string> {
  try {
    return ok(readFileSync(file, "utf8"));
  } catch (e) {
    return err(code, `cannot read the ${what} file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
