/**
 * The CONNECT openconnect sends (docs/protocol.md §5.1) and what the load client needs from the
 * answer (§5.2, §5.3): the assigned address, MTU, DPD/keepalive, and the DTLS offer. Header names
 * in the answer are matched case-sensitively, as openconnect does.
 */
import { err, ok, type Result } from "../../../src/errors.ts";
import { findLegacySuite, type DtlsSuite } from "../../../src/dtls/protocol/index.ts";

export type DtlsChoice = "psk" | "legacy" | "none";

export const USER_AGENT = "Open AnyConnect VPN Agent v9.01-3";

/** Legacy names offered (GCM first); PSK mode puts PSK-NEGOTIATE first, as GnuTLS builds do. */
const LEGACY_DTLS12 = "AES256-GCM-SHA384:AES128-GCM-SHA256";
const LEGACY_DTLS = "AES256-SHA:AES128-SHA";

export interface ConnectRequestInput {
  host: string;
  token: string;
  hostname: string;
  dtls: DtlsChoice;
  /** 48 bytes; sent in every mode but "none" (openconnect sends it in PSK mode too). */
  masterSecret: Uint8Array;
  baseMtu?: number;
}

export function connectRequest(i: ConnectRequestInput): string {
  const lines = [
    "CONNECT /CSCOSSLC/tunnel HTTP/1.1",
    `Host: ${i.host}`,
    `User-Agent: ${USER_AGENT}`,
    `Cookie: webvpn=${i.token}`,
    "X-CSTP-Version: 1",
    `X-CSTP-Hostname: ${i.hostname}`,
    `X-CSTP-Base-MTU: ${i.baseMtu ?? 1400}`,
    `X-CSTP-MTU: ${(i.baseMtu ?? 1400) - 110}`,
    "X-CSTP-Address-Type: IPv4",
  ];
  if (i.dtls !== "none") {
    lines.push(`X-DTLS-Master-Secret: ${Buffer.from(i.masterSecret).toString("hex").toUpperCase()}`);
    lines.push(`X-DTLS-CipherSuite: ${i.dtls === "psk" ? `PSK-NEGOTIATE:${LEGACY_DTLS}` : LEGACY_DTLS}`);
    lines.push(`X-DTLS12-CipherSuite: ${LEGACY_DTLS12}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

export type DtlsGrant =
  | { kind: "legacy"; port: number; sessionId: Uint8Array; suite: DtlsSuite; dpdSeconds: number; keepaliveSeconds: number }
  | { kind: "psk"; port: number; appId: Uint8Array; dpdSeconds: number; keepaliveSeconds: number };

export interface TunnelGrant {
  /** The tunnel address, as 4 bytes. */
  address: Uint8Array;
  netmask: Uint8Array;
  mtu: number;
  dpdSeconds: number;
  keepaliveSeconds: number;
  dtls?: DtlsGrant;
}

/** Parses the CONNECT answer's head (status line and headers, no empty line). Refusals carry X-Reason. */
export function parseConnectAnswer(head: string): Result<TunnelGrant> {
  const lines = head.split("\r\n");
  const status = lines[0] ?? "";
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).replace(/^ /, ""));
  }
  // §5.2: the client needs exactly "HTTP/1.1 200 " (a reason phrase is required).
  if (!status.startsWith("HTTP/1.1 200 ")) {
    const reason = headers.get("X-Reason");
    return err("load.connect-refused", `CONNECT refused: ${status}${reason ? ` (${reason})` : ""}`);
  }
  const address = parseIpv4(headers.get("X-CSTP-Address"));
  if (!address) return err("load.connect-answer", "CONNECT answer has no IPv4 X-CSTP-Address");
  const mtu = Number(headers.get("X-CSTP-MTU") ?? headers.get("X-DTLS-MTU"));
  if (!Number.isInteger(mtu) || mtu <= 0) return err("load.connect-answer", "CONNECT answer has no X-CSTP-MTU");
  const seconds = (name: string) => Number(headers.get(name) ?? 0) || 0;
  const grant: TunnelGrant = {
    address,
    netmask: parseIpv4(headers.get("X-CSTP-Netmask")) ?? Uint8Array.of(255, 255, 255, 0),
    mtu,
    dpdSeconds: seconds("X-CSTP-DPD"),
    keepaliveSeconds: seconds("X-CSTP-Keepalive"),
  };
  const dtls = parseDtlsGrant(headers);
  if (!dtls.ok) return dtls;
  if (dtls.value) grant.dtls = dtls.value;
  return ok(grant);
}

function parseDtlsGrant(h: Map<string, string>): Result<DtlsGrant | undefined> {
  const port = Number(h.get("X-DTLS-Port"));
  const sessionId = h.get("X-DTLS-Session-ID");
  const appId = h.get("X-DTLS-App-ID");
  if (!sessionId && !appId) return ok(undefined); // §5.3: neither means CSTP only
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return err("load.connect-answer", "DTLS offered without a valid X-DTLS-Port");
  const dpdSeconds = Number(h.get("X-DTLS-DPD") ?? 0) || 0;
  const keepaliveSeconds = Number(h.get("X-DTLS-Keepalive") ?? 0) || 0;
  if (appId) {
    if (h.get("X-DTLS-CipherSuite") !== "PSK-NEGOTIATE") return err("load.connect-answer", "X-DTLS-App-ID without X-DTLS-CipherSuite: PSK-NEGOTIATE");
    if (!/^([0-9a-fA-F]{2}){1,32}$/.test(appId)) return err("load.connect-answer", `X-DTLS-App-ID is not even-length hex of at most 64 digits: ${appId}`);
    return ok({ kind: "psk", port, appId: Buffer.from(appId, "hex"), dpdSeconds, keepaliveSeconds });
  }
  // §9 item 8: exactly 64 hex digits, or openconnect aborts the whole connection.
  if (!/^[0-9a-fA-F]{64}$/.test(sessionId!)) return err("load.connect-answer", `X-DTLS-Session-ID is not 64 hex digits: ${sessionId}`);
  // §9 item 9: the header the name comes under says which table it belongs to.
  const dtls12 = h.get("X-DTLS12-CipherSuite");
  const name = dtls12 ?? h.get("X-DTLS-CipherSuite");
  const suite = name ? findLegacySuite(dtls12 ? "X-DTLS12" : "X-DTLS", name) : undefined;
  if (!suite) return err("load.connect-answer", `the gateway chose DTLS cipher ${name ?? "(none)"}, which this client does not know`);
  return ok({ kind: "legacy", port, sessionId: Buffer.from(sessionId!, "hex"), suite, dpdSeconds, keepaliveSeconds });
}

function parseIpv4(text: string | undefined): Uint8Array | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text ?? "");
  if (!m) return undefined;
  const b = m.slice(1).map(Number);
  return b.every((x) => x <= 255) ? Uint8Array.from(b) : undefined;
}

/** The gateway's own tunnel address: the pool's first (the network of address/netmask, plus one). */
export function gatewayTunnelAddress(grant: TunnelGrant): Uint8Array {
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) out[i] = grant.address[i]! & grant.netmask[i]!;
  out[3] = out[3]! + 1;
  return out;
}
