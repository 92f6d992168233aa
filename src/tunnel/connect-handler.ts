import type { Session, SessionRegistry } from "../control/sessions.ts";
import type { AddressPool } from "../net/address-pool.ts";
import type { AddressPool6 } from "../net/address-pool6.ts";
import { formatIpv6 } from "../net/ipv6.ts";
import { offerIpv6, type Ipv6Pool } from "./ipv6-offer.ts";
import { formatIpv4, parseIpv4 } from "../net/ipv4.ts";
import { SESSION_COOKIE } from "../front/auth-endpoint.ts";
import { parseCookies } from "../front/cookies.ts";
import type { CstpDialect } from "./cstp-codec.ts";
import type { DtlsOffer } from "./dtls-offer.ts";
import type { HeaderList, HttpRequest } from "../front/http-head.ts";
import type { ResponseSpec } from "../front/http-response.ts";
import { cstpHeaders, negotiateTunnel, type TunnelDefaults, type TunnelParams } from "./tunnel-params.ts";
import { sessionTimeoutHeaders } from "./session-timeout-headers.ts";
import { logLine, type Log } from "../log/log-line.ts";

/** What deciding a CONNECT reads of the data plane (DataPlane fits). */
export interface ConnectContext {
  readonly sessions: SessionRegistry;
  now(): number;
  readonly log: Log;
}

/** Both tunnel paths: the real clients' and the spec's (docs/architecture.md §2 "Two dialects"). */
export const TUNNEL_PATHS = new Set(["/CSCOSSLC/tunnel", "/VENDORSSLC/tunnel"]);

export type ConnectDecision =
  | { kind: "refuse"; response: ResponseSpec }
  | {
      kind: "accept";
      session: Session;
      params: TunnelParams;
      headers: [string, string][];
      dialect: CstpDialect | undefined;
      dtls: DtlsOffer | undefined;
    };

/** Offers DTLS for a tunnel with these parameters, or not (no UDP, or nothing the client offered fits). */
export type DtlsOfferer = (request: HttpRequest, params: TunnelParams) => DtlsOffer | undefined;

/**
 * Decides a CONNECT: a valid cookie gets the tunnel configuration; anything else a clear error
 * and no tunnel. 401 makes openconnect stop at once ("Cookie was rejected"); 503 + X-Reason is
 * reported to the user (docs/protocol.md §5.2).
 */
export function decideConnect(
  request: HttpRequest,
  plane: ConnectContext,
  pool: AddressPool,
  defaults: TunnelDefaults,
  offerDtls: DtlsOfferer,
  pool6?: AddressPool6,
): ConnectDecision {
  const grant = grantConnect(request.headers, plane, pool, defaults);
  return grant.kind === "refuse" ? grant : completeConnect(request, grant, plane, offerDtls, pool6);
}

/** The control plane's part of a CONNECT: the session, its address and its tunnel parameters (before DTLS). */
export type ConnectGrant =
  | { kind: "refuse"; response: ResponseSpec }
  | { kind: "grant"; session: Session; params: TunnelParams; timeoutHeaders: [string, string][] };

/**
 * The cookie's session, the user's limit, the address lease and the negotiated parameters: what
 * the session registry and the pools decide, in the main process when workers carry the tunnels.
 */
export function grantConnect(headers: HeaderList, plane: ConnectContext, pool: AddressPool, defaults: TunnelDefaults): ConnectGrant {
  const token = parseCookies(headers.get("cookie")).get(SESSION_COOKIE);
  if (!token || token === "(null)") return refuse(401, "Unauthorized", "no webvpn session cookie: log in first (POST /auth)");
  const session = plane.sessions.findByToken(token);
  if (!session) return refuse(401, "Unauthorized", "the session cookie is unknown or expired: log in again");
  const live = plane.sessions.userLimitReached(session);
  if (live !== undefined) {
    // 503, not 401: the cookie stays good and openconnect retries a reconnect (docs/protocol.md §5.2).
    return refuse(503, "Service Unavailable", `this user already has ${live} connected session(s), the most allowed: disconnect one first`);
  }
  if (session.address === undefined) {
    // A static or hinted address is honoured when free; the lease then stays with the session.
    // A reconnect repeats the IPv4 address, and the IPv6 one in a second header (§8.2).
    const hint = headers.getAll("x-cstp-address").map(parseIpv4).find((a) => a !== undefined);
    const lease = pool.lease(hint);
    if (!lease.ok) return refuse(503, "Service Unavailable", lease.error.message);
    session.address = lease.value;
  }
  const params = negotiateTunnel(headers, session.address, session.policy, defaults);
  return { kind: "grant", session, params, timeoutHeaders: sessionTimeoutHeaders(session, plane.now()) };
}

/** The connection's part: the DTLS offer (its socket's PSK, its UDP port), IPv6, the answer's headers. */
export function completeConnect(
  request: HttpRequest,
  grant: Extract<ConnectGrant, { kind: "grant" }>,
  plane: Pick<ConnectContext, "log">,
  offerDtls: DtlsOfferer,
  pool6?: Ipv6Pool,
): ConnectDecision {
  const { session, params } = grant;
  const dtls = offerDtls(request, params);
  // One tunnel MTU for both channels: the client's TUN device has only one (§7.7).
  if (dtls?.mtu !== undefined) params.mtu = dtls.mtu;
  const ipv6 = offerIpv6(request.headers, session, pool6, params.mtu);
  // A full IPv6 pool leaves the tunnel IPv4 only rather than refusing it.
  if (!ipv6.ok) plane.log(logLine`tunnel without IPv6 session=${session.id} user=${session.user}: ${ipv6.error.message}`);
  else params.ipv6 = ipv6.value;
  const headers = [...cstpHeaders(params), ...grant.timeoutHeaders, ...(dtls?.headers ?? [])];
  const address6 = params.ipv6 ? formatIpv6(params.ipv6.address) : "none";
  plane.log(logLine`tunnel up session=${session.id} user=${session.user} address=${formatIpv4(params.address)} address6=${address6} mtu=${params.mtu} dtls=${dtls?.mode.kind ?? "no"}`);
  return { kind: "accept", session, params, headers, dialect: dialectFromAgent(request.headers.get("user-agent")), dtls };
}

/**
 * openconnect and AnyConnect always speak STF; for them the dialect is known before the first
 * frame, so downstream packets can flow at once. Others are detected from their first frame.
 */
function dialectFromAgent(userAgent: string | undefined): CstpDialect | undefined {
  return userAgent && /AnyConnect|OpenConnect/i.test(userAgent) ? "stf" : undefined;
}

function refuse(status: number, reason: string, message: string): { kind: "refuse"; response: ResponseSpec } {
  return {
    kind: "refuse",
    response: {
      status,
      reason,
      headers: [
        ["X-Reason", message],
        ["Content-Type", "text/plain; charset=utf-8"],
        ["Connection", "close"],
      ],
      body: `${message}\n`,
    },
  };
}
