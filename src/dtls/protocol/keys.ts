/**
 * Key material for the DTLS data channel (docs/protocol.md §7.3 "Key derivation", §7.4).
 * key_block = PRF(master, "key expansion", server_random ‖ client_random), split as
 *   CBC: client MAC ‖ server MAC ‖ client key ‖ server key   (IVs are explicit per record)
 *   GCM: client key ‖ server key ‖ client salt(4) ‖ server salt(4)
 */
import type { DtlsSuite } from "./cipher-suites.ts";
import { concatBytes } from "./bytes.ts";
import { prf } from "./prf.ts";

export interface TrafficKeys {
  readonly clientMacKey: Uint8Array;
  readonly serverMacKey: Uint8Array;
  readonly clientKey: Uint8Array;
  readonly serverKey: Uint8Array;
  /** GCM implicit nonce part; empty for CBC. */
  readonly clientSalt: Uint8Array;
  readonly serverSalt: Uint8Array;
}

export const MASTER_SECRET_LENGTH = 48;

export function keyBlockLength(suite: DtlsSuite): number {
  return 2 * (suite.macKeyLength + suite.encKeyLength + suite.fixedIvLength);
}

export function deriveKeyBlock(
  suite: DtlsSuite,
  masterSecret: Uint8Array,
  clientRandom: Uint8Array,
  serverRandom: Uint8Array,
): Uint8Array {
  return prf(suite.prf, masterSecret, "key expansion", concatBytes([serverRandom, clientRandom]), keyBlockLength(suite));
}

export function splitKeyBlock(suite: DtlsSuite, keyBlock: Uint8Array): TrafficKeys {
  let o = 0;
  const take = (n: number): Uint8Array => keyBlock.slice(o, (o += n));
  const clientMacKey = take(suite.macKeyLength);
  const serverMacKey = take(suite.macKeyLength);
  const clientKey = take(suite.encKeyLength);
  const serverKey = take(suite.encKeyLength);
  const clientSalt = take(suite.fixedIvLength);
  const serverSalt = take(suite.fixedIvLength);
  return { clientMacKey, serverMacKey, clientKey, serverKey, clientSalt, serverSalt };
}

export function deriveTrafficKeys(
  suite: DtlsSuite,
  masterSecret: Uint8Array,
  clientRandom: Uint8Array,
  serverRandom: Uint8Array,
): TrafficKeys {
  return splitKeyBlock(suite, deriveKeyBlock(suite, masterSecret, clientRandom, serverRandom));
}

/** RFC 4279 §2 plain-PSK pre-master: uint16 N ‖ N zero bytes ‖ uint16 N ‖ PSK (N = 32 for openconnect). */
export function pskPreMasterSecret(psk: Uint8Array): Uint8Array {
  const n = psk.length;
  const out = new Uint8Array(4 + 2 * n);
  out[0] = n >>> 8;
  out[1] = n;
  out[2 + n] = n >>> 8;
  out[3 + n] = n;
  out.set(psk, 4 + n);
  return out;
}

/** §7.4: master = PRF(pre-master, "master secret", client_random ‖ server_random), 48 bytes. */
export function masterSecretFromPsk(
  suite: DtlsSuite,
  psk: Uint8Array,
  clientRandom: Uint8Array,
  serverRandom: Uint8Array,
): Uint8Array {
  return prf(suite.prf, pskPreMasterSecret(psk), "master secret", concatBytes([clientRandom, serverRandom]), MASTER_SECRET_LENGTH);
}
