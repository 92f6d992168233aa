import { X509Certificate } from "node:crypto";
import type { Finding } from "./check.ts";

const DAY_MS = 86_400_000;
/** Warn this long before the server certificate expires: time to renew without a rush. */
const RENEW_WARNING_DAYS = 30;

/** The server certificate: parseable, valid now, and not about to expire. */
export function checkServerCertificate(pem: string | undefined, path: string, now: number): Finding {
  const check = "server certificate";
  if (pem === undefined) {
    return { check, status: "warn", detail: `${path} does not exist yet`, fix: "gw serve generates a self-signed one at first start; or set certFile/keyFile (gw config set)" };
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch (e) {
    return { check, status: "fail", detail: `${path} is not a PEM certificate: ${(e as Error).message}`, fix: "point certFile at the PEM certificate (chain first) and keyFile at its key" };
  }
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  const subject = cert.subject.replaceAll("\n", ", ");
  if (now < from) {
    return { check, status: "fail", detail: `${path} (${subject}) is not valid before ${cert.validFrom}`, fix: "check the clock (see 'clock'), or use a certificate valid now" };
  }
  if (now >= to) {
    return { check, status: "fail", detail: `${path} (${subject}) expired on ${cert.validTo}: clients refuse the gateway`, fix: "renew the certificate, then gw reload (or restart gw serve)" };
  }
  const days = Math.floor((to - now) / DAY_MS);
  if (days < RENEW_WARNING_DAYS) {
    return { check, status: "warn", detail: `${path} (${subject}) expires in ${days} day(s), on ${cert.validTo}`, fix: "renew the certificate, then gw reload (or restart gw serve)" };
  }
  return { check, status: "ok", detail: `${path} (${subject}) valid until ${cert.validTo} (${days} days)` };
}
