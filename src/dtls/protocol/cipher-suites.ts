/**
 * DTLS cipher suites the gateway can run (docs/protocol.md §7.1, §7.2, §7.4).
 *
 * Legacy suites are *names* carried in the CONNECT headers; the key-exchange part of a name is
 * meaningless (the handshake is always a resumption with a client-supplied master secret), and the
 * same name means different things under the two headers (`AES128-SHA` is DTLS 0.9 under
 * X-DTLS-CipherSuite but DTLS 1.2 under X-DTLS12-CipherSuite). DES-CBC3-SHA and
 * OC2-DTLS1_2-CHACHA20-POLY1305 are deliberately absent: never offered back (§7.2).
 */
import type { PrfKind } from "./prf.ts";

export const DTLS0_9 = 0x0100;
export const DTLS1_0 = 0xfeff;
export const DTLS1_2 = 0xfefd;

export type SuiteKind = "gcm" | "cbc";
/** Header the legacy name is listed under; PSK suites are negotiated inside DTLS (`PSK-NEGOTIATE`). */
export type SuiteHeader = "X-DTLS" | "X-DTLS12";

export interface DtlsSuite {
  /** The legacy header name, or the IANA-style name for PSK suites. */
  readonly name: string;
  readonly header: SuiteHeader;
  readonly keyExchange: "resumption" | "psk";
  /** Version on the wire (record and hello): 0x0100 (DTLS 0.9) or 0xFEFD (DTLS 1.2). */
  readonly version: typeof DTLS0_9 | typeof DTLS1_2;
  readonly id: number;
  readonly prf: PrfKind;
  readonly macKeyLength: number;
  readonly encKeyLength: number;
  /** Implicit part of the IV taken from the key block: GCM salt (4); 0 for CBC (explicit IV). */
  readonly fixedIvLength: number;
  /** Explicit per-record IV/nonce: 16 for CBC, 8 for GCM. */
  readonly recordIvLength: number;
  readonly kind: SuiteKind;
}

const cbc = (name: string, header: SuiteHeader, version: DtlsSuite["version"], id: number, enc: 16 | 32): DtlsSuite => ({
  name,
  header,
  keyExchange: "resumption",
  version,
  id,
  prf: version === DTLS0_9 ? "tls10" : "sha256",
  macKeyLength: 20,
  encKeyLength: enc,
  fixedIvLength: 0,
  recordIvLength: 16,
  kind: "cbc",
});

const gcm = (name: string, header: SuiteHeader, id: number, enc: 16 | 32, kx: DtlsSuite["keyExchange"] = "resumption"): DtlsSuite => ({
  name,
  header,
  keyExchange: kx,
  version: DTLS1_2,
  id,
  prf: enc === 32 ? "sha384" : "sha256",
  macKeyLength: 0,
  encKeyLength: enc,
  fixedIvLength: 4,
  recordIvLength: 8,
  kind: "gcm",
});

/** §7.2 table (without DES/CHACHA). */
export const LEGACY_SUITES: readonly DtlsSuite[] = [
  cbc("AES128-SHA", "X-DTLS", DTLS0_9, 0x002f, 16),
  cbc("AES256-SHA", "X-DTLS", DTLS0_9, 0x0035, 32),
  cbc("DHE-RSA-AES128-SHA", "X-DTLS", DTLS0_9, 0x0033, 16),
  cbc("DHE-RSA-AES256-SHA", "X-DTLS", DTLS0_9, 0x0039, 32),
  gcm("OC-DTLS1_2-AES128-GCM", "X-DTLS", 0x009c, 16),
  gcm("OC-DTLS1_2-AES256-GCM", "X-DTLS", 0x009d, 32),
  cbc("AES128-SHA", "X-DTLS12", DTLS1_2, 0x002f, 16),
  cbc("AES256-SHA", "X-DTLS12", DTLS1_2, 0x0035, 32),
  cbc("DHE-RSA-AES128-SHA", "X-DTLS12", DTLS1_2, 0x0033, 16),
  cbc("DHE-RSA-AES256-SHA", "X-DTLS12", DTLS1_2, 0x0039, 32),
  gcm("AES128-GCM-SHA256", "X-DTLS12", 0x009c, 16),
  gcm("AES256-GCM-SHA384", "X-DTLS12", 0x009d, 32),
  gcm("ECDHE-RSA-AES128-GCM-SHA256", "X-DTLS12", 0xc02f, 16),
  gcm("ECDHE-RSA-AES256-GCM-SHA384", "X-DTLS12", 0xc030, 32),
];

/** §7.4: PSK-NEGOTIATE suites (ocserv chose 00A9 against openconnect 9.01). */
export const PSK_AES256_GCM_SHA384: DtlsSuite = gcm("PSK-AES256-GCM-SHA384", "X-DTLS", 0x00a9, 32, "psk");
export const PSK_AES128_GCM_SHA256: DtlsSuite = gcm("PSK-AES128-GCM-SHA256", "X-DTLS", 0x00a8, 16, "psk");
export const PSK_SUITES: readonly DtlsSuite[] = [PSK_AES256_GCM_SHA384, PSK_AES128_GCM_SHA256];

/** The token a client puts in X-DTLS-CipherSuite to ask for the PSK scheme (§7.1). */
export const PSK_NEGOTIATE = "PSK-NEGOTIATE";

export function findLegacySuite(header: SuiteHeader, name: string): DtlsSuite | undefined {
  return LEGACY_SUITES.find((s) => s.header === header && s.name === name);
}

/** The server's preferred PSK suite among those in a ClientHello's list. */
export function choosePskSuite(offered: readonly number[]): DtlsSuite | undefined {
  return PSK_SUITES.find((s) => offered.includes(s.id));
}

/** Splits a colon-separated cipher header value ("A:B:C") into names. */
export function parseCipherList(value: string | undefined | null): string[] {
  if (!value) return [];
  return value
    .split(":")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export type CipherSuiteResponseHeader = "X-DTLS12-CipherSuite" | "X-DTLS-CipherSuite";

export interface LegacyChoice {
  readonly suite: DtlsSuite;
  /** Name to echo, exactly as the client spelled it (it is looked up in the table by this name). */
  readonly name: string;
  /** The chosen name must come back under the header of the list it came from (§9 item 9). */
  readonly header: CipherSuiteResponseHeader;
}

/**
 * ocserv's preference order (§7.1): the X-DTLS12 list first (AES256-GCM-SHA384 >
 * AES128-GCM-SHA256, the ECDHE-RSA-… spellings accepted for the same ciphers), else
 * OC-DTLS1_2-AES256-GCM > OC-DTLS1_2-AES128-GCM > AES256-SHA > AES128-SHA from X-DTLS.
 * After those, DTLS 1.2 CBC names from the X-DTLS12 list are a last resort. Never DES/CHACHA.
 */
const PREFERENCE: readonly [SuiteHeader, string][] = [
  ["X-DTLS12", "AES256-GCM-SHA384"],
  ["X-DTLS12", "ECDHE-RSA-AES256-GCM-SHA384"],
  ["X-DTLS12", "AES128-GCM-SHA256"],
  ["X-DTLS12", "ECDHE-RSA-AES128-GCM-SHA256"],
  ["X-DTLS", "OC-DTLS1_2-AES256-GCM"],
  ["X-DTLS", "OC-DTLS1_2-AES128-GCM"],
  ["X-DTLS", "AES256-SHA"],
  ["X-DTLS", "DHE-RSA-AES256-SHA"],
  ["X-DTLS", "AES128-SHA"],
  ["X-DTLS", "DHE-RSA-AES128-SHA"],
  ["X-DTLS12", "AES256-SHA"],
  ["X-DTLS12", "DHE-RSA-AES256-SHA"],
  ["X-DTLS12", "AES128-SHA"],
  ["X-DTLS12", "DHE-RSA-AES128-SHA"],
];

export function chooseLegacySuite(offer: { dtls12List?: readonly string[]; dtlsList?: readonly string[] }): LegacyChoice | undefined {
  const lists: Record<SuiteHeader, readonly string[]> = {
    "X-DTLS12": offer.dtls12List ?? [],
    "X-DTLS": offer.dtlsList ?? [],
  };
  for (const [header, name] of PREFERENCE) {
    if (!lists[header].includes(name)) continue;
    const suite = findLegacySuite(header, name);
    if (!suite) continue;
    return { suite, name, header: header === "X-DTLS12" ? "X-DTLS12-CipherSuite" : "X-DTLS-CipherSuite" };
  }
  return undefined;
}

/** Maximum bytes a record of this suite adds around `plaintextLength` bytes (header included). */
export function recordOverhead(suite: DtlsSuite, plaintextLength: number): number {
  if (suite.kind === "gcm") return 13 + suite.recordIvLength + 16;
  const blocks = Math.floor((plaintextLength + 20) / 16) + 1; // MAC + at least one padding byte
  return 13 + suite.recordIvLength + blocks * 16 - plaintextLength;
}

/**
 * Tunnel data MTU for X-CSTP-MTU / X-DTLS-MTU (§7.7): link MTU − IP − UDP(8) − record overhead − 1
 * (the type byte of §7.5). GCM: 13 + 8 + 16; CBC: 13 + 16 IV, then the largest plaintext whose
 * plaintext ‖ MAC(20) ‖ padding(≥1) fits in whole 16-byte blocks. Base 1400 gives 1334
 * (AES256-GCM, DTLS 1.2) and 1306 (AES128-SHA, DTLS 0.9), as observed.
 */
export function dataMtu(suite: DtlsSuite, linkMtu: number, opts: { ipv6?: boolean } = {}): number {
  const udpPayload = linkMtu - (opts.ipv6 ? 40 : 20) - 8;
  let plaintext: number;
  if (suite.kind === "gcm") {
    plaintext = udpPayload - 13 - suite.recordIvLength - 16;
  } else {
    const cipherBytes = Math.floor((udpPayload - 13 - suite.recordIvLength) / 16) * 16;
    plaintext = cipherBytes - 20 - 1; // HMAC-SHA1 output is 20 bytes
  }
  return Math.max(0, plaintext - 1);
}
