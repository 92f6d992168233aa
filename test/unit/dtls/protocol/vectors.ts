/** Loads test/fixtures/dtls-test-vectors.json (captured openconnect 9.01 ↔ ocserv 1.1.6 handshakes). */
import raw from "../../../fixtures/dtls-test-vectors.json" with { type: "json" };

export const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "hex"));
export const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

export interface Datagram {
  dir: "C->S" | "S->C";
  bytes: Uint8Array;
}

function datagrams(v: { datagrams: { dir: string; hex: string }[] }): Datagram[] {
  return v.datagrams.map((d) => ({ dir: d.dir as Datagram["dir"], bytes: hex(d.hex) }));
}

const v09 = raw["dtls0.9_AES128-SHA_resume"];
const v12 = raw["dtls1.2_AES256-GCM-SHA384_resume"];
const vpsk = raw["dtls1.2_PSK-NEGOTIATE_PSK-AES256-GCM-SHA384"];

export const legacy09 = {
  master: hex(v09["X-DTLS-Master-Secret"]),
  sessionId: hex(v09["X-DTLS-Session-ID"]),
  clientRandom: hex(v09.client_random),
  serverRandom: hex(v09.server_random),
  keyBlock: hex(v09.key_block_72),
  clientMacKey: hex(v09.client_mac_key),
  serverMacKey: hex(v09.server_mac_key),
  clientKey: hex(v09.client_enc_key),
  serverKey: hex(v09.server_enc_key),
  serverVerifyData: hex(v09.server_verify_data),
  datagrams: datagrams(v09),
};

export const legacy12 = {
  master: hex(v12["X-DTLS-Master-Secret"]),
  sessionId: hex(v12["X-DTLS-Session-ID"]),
  clientRandom: hex(v12.client_random),
  serverRandom: hex(v12.server_random),
  clientKey: hex(v12.client_write_key),
  serverKey: hex(v12.server_write_key),
  clientSalt: hex(v12.client_salt),
  serverSalt: hex(v12.server_salt),
  serverVerifyData: hex(v12.server_verify_data),
  datagrams: datagrams(v12),
};

const pskServerHello = hex(vpsk.datagrams[1].hex).subarray(13 + 12);

export const psk12 = {
  psk: hex(vpsk.psk),
  /** The fresh session_id ocserv put in its PSK ServerHello (inject it to reproduce the transcript). */
  serverSessionId: pskServerHello.subarray(35, 35 + pskServerHello[34]),
  appId: hex(vpsk["X-DTLS-App-ID"]),
  clientRandom: hex(vpsk.client_random),
  serverRandom: hex(vpsk.server_random),
  master: hex(vpsk.master_secret),
  datagrams: datagrams(vpsk),
};
