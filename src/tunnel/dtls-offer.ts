import { randomBytes } from "node:crypto";
import type { HeaderList } from "../front/http-head.ts";
import {
  chooseLegacySuite,
  dataMtu,
  parseCipherList,
  PSK_AES256_GCM_SHA384,
  PSK_NEGOTIATE,
  type DtlsHandshakeMode,
} from "../dtls/protocol/index.ts";

/** What a CONNECT answer promises about DTLS, and how the UDP side recognises the client. */
export interface DtlsOffer {
  mode: DtlsHandshakeMode;
  /** Hex of the 32 bytes the ClientHello will carry (Session-ID in legacy mode, App-ID in PSK mode). */
  lookupKey: string;
  headers: [string, string][];
  /** Legacy mode fixes the tunnel MTU for both channels (§7.7); PSK lets the client compute it. */
  mtu?: number;
}

export interface DtlsOfferInput {
  headers: HeaderList;
  udpPort: number;
  dpdSeconds: number;
  keepaliveSeconds: number;
  /** The tunnel MTU negotiated for CSTP. */
  mtu: number;
  /** The client reaches the gateway over IPv6: each datagram then carries a 40-byte IP header, not 20. */
  outerIpv6?: boolean;
  /** TLS exporter of the connection that carried the CONNECT; undefined when the runtime has none. */
  exportPsk?: () => Uint8Array | undefined;
}

/** Assumed link MTU when the client gives none (openconnect's default, §5.1). */
const DEFAULT_BASE_MTU = 1406;

/**
 * Chooses the DTLS mode (docs/protocol.md §7.1): PSK-NEGOTIATE when offered and the TLS exporter
 * works, else the legacy resumption with ocserv's preference order, else none (no X-DTLS-*
 * headers at all, never DTLS that cannot complete: §9 item 10).
 */
export function offerDtls(input: DtlsOfferInput): DtlsOffer | undefined {
  const dtlsList = parseCipherList(input.headers.get("x-dtls-ciphersuite"));
  const dtls12List = parseCipherList(input.headers.get("x-dtls12-ciphersuite"));
  const common: [string, string][] = [
    ["X-DTLS-Port", String(input.udpPort)],
    ["X-DTLS-DPD", String(input.dpdSeconds)],
    ["X-DTLS-Keepalive", String(input.keepaliveSeconds)],
  ];
  const baseMtu = clampBaseMtu(input.headers.get("x-cstp-base-mtu"));

  if (dtlsList.includes(PSK_NEGOTIATE)) {
    const psk = input.exportPsk?.();
    if (psk && psk.length === 32) {
      const appId = randomBytes(32);
      return {
        mode: { kind: "psk", psk },
        lookupKey: appId.toString("hex"),
        headers: [["X-DTLS-App-ID", appId.toString("hex")], ["X-DTLS-CipherSuite", PSK_NEGOTIATE], ...common, ["X-CSTP-Base-MTU", String(baseMtu)]],
        mtu: Math.min(input.mtu, dataMtu(PSK_AES256_GCM_SHA384, baseMtu, { ipv6: input.outerIpv6 })),
      };
    }
  }

  const masterHex = input.headers.get("x-dtls-master-secret") ?? "";
  if (!/^[0-9A-Fa-f]{96}$/.test(masterHex)) return undefined;
  const choice = chooseLegacySuite({ dtls12List, dtlsList });
  if (!choice) return undefined;
  const sessionId = randomBytes(32);
  const mtu = Math.min(input.mtu, dataMtu(choice.suite, baseMtu, { ipv6: input.outerIpv6 }));
  return {
    mode: { kind: "legacy", masterSecret: Buffer.from(masterHex, "hex"), sessionId, suite: choice.suite },
    lookupKey: sessionId.toString("hex"),
    headers: [
      ["X-DTLS-Session-ID", sessionId.toString("hex")], // exactly 64 hex digits (§9 item 8)
      [choice.header, choice.name], // under the header of the list it came from (§9 item 9)
      ...common,
      ["X-DTLS-MTU", String(mtu)],
    ],
    mtu,
  };
}

function clampBaseMtu(value: string | undefined): number {
  const n = Number.parseInt(value ?? "", 10);
  if (!Number.isFinite(n)) return DEFAULT_BASE_MTU;
  return Math.min(Math.max(n, 1280), 1500);
}
