import { describe, expect, test } from "bun:test";
import { err, ok } from "../../../src/errors.ts";
import type { ClientCertificateInfo } from "../../../src/pki/verify-client-cert.ts";
import { certificateFromWire, certificateToWire, wireCertificate } from "../../../src/serve/wire-certificate.ts";

const info: ClientCertificateInfo = {
  subjectCN: "carol",
  emails: ["carol@example.org"],
  subjectEmail: "carol@example.org",
  dnsNames: [],
  serial: "0A1B",
  subject: "CN=carol",
  issuer: "CN=e2e client CA",
  notAfter: new Date("2027-01-02T03:04:05.000Z"),
};

describe("a client certificate's verdict between a worker and the main process", () => {
  test("checked facts cross as checked JSON and come back the same, the date a Date again", () => {
    const wire = JSON.parse(JSON.stringify(certificateToWire(ok(info))));
    const parsed = wireCertificate.safeParse(wire);
    expect(parsed.success).toBe(true);
    expect(certificateFromWire(parsed.data!)).toEqual(ok(info));
  });

  test("a refusal keeps its code and the message the user is shown", () => {
    const refused = err("cert_expired", "The client certificate expired on 2026-01-01.");
    const back = certificateFromWire(wireCertificate.parse(JSON.parse(JSON.stringify(certificateToWire(refused)))));
    expect(back.ok).toBe(false);
    if (!back.ok) expect({ code: back.error.code, message: back.error.message }).toEqual({ code: "cert_expired", message: "The client certificate expired on 2026-01-01." });
  });

  test("a malformed verdict is refused by the schema", () => {
    expect(wireCertificate.safeParse({ ok: true, serial: "01" }).success).toBe(false);
    expect(wireCertificate.safeParse({ ok: false, code: 7 }).success).toBe(false);
  });
});
