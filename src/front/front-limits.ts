/**
 * Limits of the tunnel port's login front (TCP 443 before CONNECT): how long a client may take
 * and how many connections it may hold while it is not yet a tunnel. Constants for now; a later
 * issue moves settings into one table, and these are candidates.
 */
export const FRONT_LIMITS = {
  /** A TLS handshake must finish this soon after the TCP connection is accepted. */
  handshakeMs: 10_000,
  /** The first request must begin this soon after the handshake. */
  firstRequestMs: 10_000,
  /** A request head must be complete this soon after its first byte (slowloris). */
  headMs: 10_000,
  /** A request body must be complete this soon after its head. */
  bodyMs: 10_000,
  /**
   * Silence allowed between requests of a login in progress: a person may be typing a password
   * or a one-time code while openconnect keeps the connection open. Never longer than this.
   */
  idleMs: 60_000,
  /** Answers the client does not read: the connection is closed when they stay unsent this long. */
  sendMs: 20_000,
  /** After a closing answer, how long the client has to read it before the connection is destroyed. */
  closeGraceMs: 5_000,
  /**
   * Parsed, unanswered requests per connection. Real clients send one request at a time; past
   * this the connection is answered with 429 and closed.
   */
  maxQueuedRequests: 16,
  /** Connections not yet a tunnel (TLS handshake or HTTP login) per client address. */
  maxUnauthenticatedPerAddress: 32,
  /** Connections not yet a tunnel in total. */
  maxUnauthenticated: 1024,
} as const;

export type FrontLimits = { -readonly [K in keyof typeof FRONT_LIMITS]: number };
