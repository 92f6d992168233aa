/**
 * PKCS#12 (RFC 7292) for handing a user their certificate and key in one password-protected
 * file (`openconnect --certificate user.p12 --key-password ...`, OS keychains, Cisco Secure
 * Client). Modern algorithms, as OpenSSL 3 writes by default: the key and the certificates
 * each encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC), and an HMAC-SHA256 MAC.
 */
import { X509Certificate, createCipheriv, createHash, createHmac, createPrivateKey, pbkdf2Sync, randomBytes } from "node:crypto";
import * as der from "./der.ts";
import { invalidOptions, pemBlocks } from "./x509-build.ts";
import { bmpPassword, pkcs12Kdf } from "./pkcs12-kdf.ts";

const OID = {
  data: "1.2.840.113549.1.7.1",
  encryptedData: "1.2.840.113549.1.7.6",
  keyBag: "1.2.840.113549.1.12.10.1.2", // pkcs8ShroudedKeyBag
  certBag: "1.2.840.113549.1.12.10.1.3",
  x509Certificate: "1.2.840.113549.1.9.22.1",
  friendlyName: "1.2.840.113549.1.9.20",
  localKeyId: "1.2.840.113549.1.9.21",
  pbes2: "1.2.840.113549.1.5.13",
  pbkdf2: "1.2.840.113549.1.5.12",
  hmacWithSha256: "1.2.840.113549.2.9",
  aes256Cbc: "2.16.840.1.101.3.4.1.42",
  sha256: "2.16.840.1.101.3.4.2.1",
} as const;

export interface Pkcs12Options {
  certPem: string;
  keyPem: string;
  /** CA certificate(s) to include, so clients can show or install the chain. */
  caPem?: string;
  password: string;
  /** Label shown by keychains; default the certificate's CN. */
  friendlyName?: string;
  /** PBKDF2 and MAC iteration count (default 100000). */
  iterations?: number;
}

/** Builds a PKCS#12 file. Throws GwError `pki_invalid_options` for unreadable or mismatched PEMs. */
export function toPkcs12(options: Pkcs12Options): Uint8Array {
  const { password, iterations = 100_000 } = options;
  const what = "PKCS#12 file";
  let cert: X509Certificate;
  let pkcs8: Uint8Array;
  try {
    cert = new X509Certificate(options.certPem);
  } catch {
    invalidOptions(what, "the certificate is not a readable PEM certificate");
  }
  try {
    const key = createPrivateKey(options.keyPem);
    if (!cert.checkPrivateKey(key)) invalidOptions(what, "the private key does not belong to the certificate");
    pkcs8 = new Uint8Array(key.export({ type: "pkcs8", format: "der" }));
  } catch (e) {
    if (e instanceof Error && e.name === "GwError") throw e;
    invalidOptions(what, "the private key is not a readable, unencrypted PEM key");
  }
  if (!Number.isSafeInteger(iterations) || iterations < 1) invalidOptions(what, `bad iteration count ${iterations}`);

  const certDer = new Uint8Array(cert.raw);
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
  const friendlyName = options.friendlyName ?? cn;
  // localKeyId ties the key to its certificate; OpenSSL uses the certificate's SHA-1.
  const localKeyId = new Uint8Array(createHash("sha1").update(certDer).digest());
  const attributes = der.set(
    der.sequence(der.oid(OID.localKeyId), der.set(der.octetString(localKeyId))),
    ...(friendlyName ? [der.sequence(der.oid(OID.friendlyName), der.set(bmpString(friendlyName)))] : []),
  );

  const certBag = (d: Uint8Array, attrs?: Uint8Array) =>
    der.sequence(
      der.oid(OID.certBag),
      der.explicit(0, der.sequence(der.oid(OID.x509Certificate), der.explicit(0, der.octetString(d)))),
      ...(attrs ? [attrs] : []),
    );
  const caCerts = options.caPem ? pemBlocks(options.caPem, "CERTIFICATE") : [];
  const certSafe = der.sequence(certBag(certDer, attributes), ...caCerts.map((c) => certBag(c)));

  const keyEncryption = pbes2(password, iterations, pkcs8);
  const keySafe = der.sequence(
    der.sequence(
      der.oid(OID.keyBag),
      der.explicit(0, der.sequence(keyEncryption.algorithm, der.octetString(keyEncryption.ciphertext))),
      attributes,
    ),
  );

  const certEncryption = pbes2(password, iterations, certSafe);
  const authSafe = der.sequence(
    der.sequence(
      der.oid(OID.encryptedData),
      der.explicit(
        0,
        der.sequence(
          der.smallInteger(0),
          der.sequence(der.oid(OID.data), certEncryption.algorithm, der.implicit(0, der.octetString(certEncryption.ciphertext))),
        ),
      ),
    ),
    der.sequence(der.oid(OID.data), der.explicit(0, der.octetString(keySafe))),
  );

  const macSalt = new Uint8Array(randomBytes(16));
  const macKey = pkcs12Kdf("sha256", bmpPassword(password), macSalt, iterations, 3, 32);
  const mac = new Uint8Array(createHmac("sha256", macKey).update(authSafe).digest());

  return der.sequence(
    der.smallInteger(3),
    der.sequence(der.oid(OID.data), der.explicit(0, der.octetString(authSafe))),
    der.sequence(
      der.sequence(der.sequence(der.oid(OID.sha256), der.nullValue()), der.octetString(mac)),
      der.octetString(macSalt),
      der.smallInteger(iterations),
    ),
  );
}

/** PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC; the password enters PBKDF2 as UTF-8 (as OpenSSL and GnuTLS do). */
function pbes2(password: string, iterations: number, plaintext: Uint8Array) {
  const salt = new Uint8Array(randomBytes(16));
  const iv = new Uint8Array(randomBytes(16));
  const key = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const cipher = createCipheriv("aes-256-cbc", key, iv);
  const ciphertext = new Uint8Array(Buffer.concat([cipher.update(plaintext), cipher.final()]));
  const algorithm = der.sequence(
    der.oid(OID.pbes2),
    der.sequence(
      der.sequence(
        der.oid(OID.pbkdf2),
        der.sequence(
          der.octetString(salt),
          der.smallInteger(iterations),
          der.sequence(der.oid(OID.hmacWithSha256), der.nullValue()),
        ),
      ),
      der.sequence(der.oid(OID.aes256Cbc), der.octetString(iv)),
    ),
  );
  return { algorithm, ciphertext };
}

/** BMPString (UTF-16BE), the type PKCS#12 uses for friendlyName. */
function bmpString(s: string): Uint8Array {
  const bytes = bmpPassword(s);
  return der.tlv(0x1e, bytes.subarray(0, bytes.length - 2));
}
