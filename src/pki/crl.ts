/** `gw pki crl`: a certificate revocation list (RFC 5280 §5, v2) signed by a gw CA. */
import * as der from "./der.ts";
import { DAY_MS, OID, extension, invalidOptions, loadCa, signed, toPem, type CaPair } from "./x509-build.ts";

export interface RevokedEntry {
  /** Serial number in hex (as `openssl x509 -serial` or X509Certificate.serialNumber show it). */
  serial: string;
  /** When the certificate was revoked. */
  date: Date;
}

export interface CrlOptions {
  ca: CaPair;
  revoked: readonly RevokedEntry[];
  /** Days until nextUpdate: the gateway refuses every certificate of this CA once it passes. */
  nextUpdateDays: number;
  /** Issue time (default now). */
  thisUpdate?: Date;
  /** cRLNumber; default: thisUpdate in Unix seconds, so each new CRL has a larger number without state. */
  crlNumber?: number;
}

/** Creates a PEM CRL. Throws GwError `pki_invalid_options` for a bad serial, days or CA pair. */
export function createCrl(options: CrlOptions): string {
  const what = "CRL";
  const { nextUpdateDays } = options;
  if (!Number.isFinite(nextUpdateDays) || nextUpdateDays <= 0) {
    invalidOptions(what, `nextUpdateDays must be positive, got ${nextUpdateDays}`);
  }
  const ca = loadCa(options.ca, what);
  const thisUpdate = new Date(Math.floor((options.thisUpdate ?? new Date()).getTime() / 1000) * 1000);
  const nextUpdate = new Date(thisUpdate.getTime() + Math.round(nextUpdateDays * DAY_MS));
  const crlNumber = options.crlNumber ?? Math.floor(thisUpdate.getTime() / 1000);

  const entries = options.revoked.map(({ serial, date }) => {
    const hex = serial.replace(/[:\s]/g, "");
    if (!/^[0-9a-fA-F]{1,40}$/.test(hex)) invalidOptions(what, `not a hex serial number: ${JSON.stringify(serial)}`);
    const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
    return der.sequence(der.integer(bytes), der.time(date));
  });

  const crl = signed(ca.key, (algorithm) =>
    der.sequence(
      der.smallInteger(1), // v2
      algorithm,
      ca.subject,
      der.time(thisUpdate),
      der.time(nextUpdate),
      // An empty revokedCertificates must be left out, not encoded empty (RFC 5280 §5.1.2.6).
      ...(entries.length > 0 ? [der.sequence(...entries)] : []),
      der.explicit(
        0,
        der.sequence(
          extension(OID.authorityKeyIdentifier, false, der.sequence(der.implicit(0, der.octetString(ca.keyId)))),
          extension(OID.cRLNumber, false, der.smallInteger(crlNumber)),
        ),
      ),
    ),
  );
  return toPem("X509 CRL", crl);
}
