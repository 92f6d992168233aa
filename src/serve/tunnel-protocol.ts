import { z } from "zod";
import type { CompiledPolicy } from "../control/group-policy.ts";
import { POOL6_MAX_PREFIX, POOL6_MIN_PREFIX } from "../net/address-pool6.ts";
import type { TunnelParams } from "../tunnel/tunnel-params.ts";
import { wireCertificate } from "./wire-certificate.ts";

/**
 * The messages between gw serve and a tunnel worker (docs/architecture.md §7): the worker holds
 * TLS connections, their CSTP and DTLS channels and its TUN queue; the main process keeps the
 * sessions, logins, pools and policies. Nothing here is per packet: a login, a CONNECT, a session
 * attached or ended, counters once a second.
 *
 * Policies and tunnel parameters are the main process's own objects (the same program made them),
 * checked for shape, not field by field.
 */
const sessionId = z.string().min(1).max(64);
const text = (max: number) => z.string().max(max);
const header = z.tuple([text(256), text(8192)]);
const headers = z.array(header).max(512);
const u32 = z.number().int().min(0).max(0xffffffff);
const plainObject = <T>() => z.custom<T>((v) => typeof v === "object" && v !== null && !Array.isArray(v), "an object");

/** A session as a worker carries it (SessionRegistry.adopt), with how many of its rules are its group's. */
const sessionSnapshot = z.object({
  id: sessionId,
  user: text(256),
  group: text(256),
  policy: plainObject<CompiledPolicy>(),
  groupRules: z.number().int().nonnegative(),
  configHash: text(128),
  createdAt: z.number(),
  tokenHash: text(128),
  address: z.number().int().nonnegative(),
  /** The session's IPv6 lease (the main process's pool), once a CONNECT took IPv6. */
  address6: z.tuple([u32, u32, u32, u32]).optional(),
  maxLivePerUser: z.number().int().nonnegative().optional(),
});
export type WireSession = z.infer<typeof sessionSnapshot>;

const endReason = z.enum(["logout", "cookie_expired", "admin", "server_stop", "dpd_timeout", "idle_timeout", "session_timeout", "replaced", "quota_exceeded", "account_expired"]);

/** PEM text as the files hold it: a CA bundle, and a CRL list, which a large CA's can make long. */
const clientCa = z.object({ caPem: text(4 * 1024 * 1024), crlPem: text(64 * 1024 * 1024).optional() });

/** What the worker needs to serve: the certificate, the tunnel defaults, its TUN queue's facts. */
const startBody = z.object({
  certPem: text(65_536),
  keyPem: text(65_536),
  tun: z.object({ name: text(15), mtu: z.number().int(), vnetHeader: z.boolean() }),
  dtls: z.boolean(),
  /** The pool (its network and prefix), for the worker's policy compiler and anti-spoofing. */
  pool: z.object({ network: z.number().int().nonnegative(), prefixLength: z.number().int().min(0).max(32) }),
  /** The IPv6 pool (--pool6), for the worker's IPv6 router, policy compiler and tunnel answers. */
  pool6: z.object({ network: z.tuple([u32, u32, u32, u32]), prefixLength: z.number().int().min(POOL6_MIN_PREFIX).max(POOL6_MAX_PREFIX) }).optional(),
  /** SAML is configured: the worker passes the service provider's pages to the main process (samlPage). */
  saml: z.boolean().optional(),
  /** The client CA and CRL (--client-ca, --crl): the worker asks for certificates and checks them. */
  clientCa: clientCa.optional(),
  /** Connections this worker holds at most (its own open-file limit's budget). */
  maxOpen: z.number().int().positive(),
  unauthenticated: z.number().int().positive(),
  /** The setting tlsRecordBatching: the worker seals its TLS 1.3 records itself. */
  tlsRecordBatching: z.boolean(),
  /** The setting tlsRecordReading: the worker opens the client's TLS 1.3 records itself from CONNECT on. */
  tlsRecordReading: z.boolean(),
});
export type TunnelWorkerStart = z.infer<typeof startBody>;

const loginBody = z.object({
  contextId: text(256).optional(),
  kind: z.enum(["init", "answer"]),
  answers: z.array(z.tuple([text(256), text(8192)])).max(64),
  group: text(256).optional(),
  client: z.object({
    peer: text(128),
    ip: text(64),
    capabilities: z.array(text(128)).max(32),
    ssoDhPubkey: text(1024).optional(),
    /** The connection's client certificate as the worker checked it (with a client CA only). */
    certificate: wireCertificate.optional(),
  }),
});
export type WireLoginRequest = z.infer<typeof loginBody>;

const loginAnswer = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("form"), contextId: text(256), form: plainObject<import("../control/auth/login-form.ts").LoginForm>() }),
  z.object({ kind: z.literal("success"), token: text(256), configHash: text(128) }),
  z.object({ kind: z.literal("refused"), message: text(4096), retryAfterSeconds: z.number().optional() }),
]);
export type WireLoginAnswer = z.infer<typeof loginAnswer>;

/** The HTTP request as the worker's front parsed it; the body in base64 (an ACS post is a form of a few kilobytes). */
const samlPageRequest = z.object({ method: text(16), target: text(8192), headers, body: text(1024 * 1024) });
const samlPageAnswer = z.object({ status: z.number().int().min(100).max(599), reason: text(128), headers, body: text(1024 * 1024) });

const connectAnswer = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("refuse"),
    response: z.object({ status: z.number().int(), reason: text(128), headers, body: text(8192) }),
  }),
  z.object({ kind: z.literal("grant"), session: sessionSnapshot, params: plainObject<TunnelParams>(), timeoutHeaders: headers }),
]);
export type WireConnectAnswer = z.infer<typeof connectAnswer>;

const connectionInfo = z.object({
  clientAddress: text(64),
  clientPort: z.number().int(),
  userAgent: text(1024),
  hostname: text(1024),
  connectedAt: z.number(),
  channel: z.enum(["cstp", "dtls"]),
  cipher: text(256),
  mtu: z.number().int(),
});
export type WireConnectionInfo = z.infer<typeof connectionInfo>;

/** [session id, packets in, packets out, bytes in, bytes out]: what moved since the last report. */
const counts = z.tuple([sessionId, z.number(), z.number(), z.number(), z.number()]);

const tally = z.array(z.tuple([text(64), z.number().nonnegative()])).max(256);
const workerCounters = z.object({
  drops: tally,
  /** Policy drops by group, then by cause (a rule's index or a reason). */
  rules: z.array(z.tuple([text(256), z.array(z.tuple([z.union([z.number().int(), text(64)]), z.number().nonnegative()])).max(1024)])).max(4096),
  refused: tally,
  timedOut: tally,
  unauthenticated: z.number().int().nonnegative(),
});
export type WorkerCounters = z.infer<typeof workerCounters>;

export const tunnelProtocol = {
  toWorker: {
    requests: {
      /** Sent after every (re)start: the worker adopts its descriptors and starts accepting. */
      start: { body: startBody, answer: z.object({ udpPort: z.number().int().nullable() }) },
      /** gw serve stops: every connection is told (server_stop) and the port is closed; answered when done. */
      stop: { body: z.object({}), answer: z.object({ ended: z.number().int().nonnegative() }) },
    },
    notes: {
      /** The session is over (or carried by another worker now): close its connection, forget it. */
      end: z.object({ sessionId, reason: endReason }),
      /** A live session's policy changed (group, user or settings). */
      policy: z.object({ sessionId, policy: plainObject<CompiledPolicy>(), groupRules: z.number().int().nonnegative() }),
      /** Collect garbage and log what memory is left (gw serve's SIGUSR2, passed on). */
      collect: z.object({}),
      /** A reload's certificate and key for the tunnel port, and its client CA and CRL when there is one. */
      certificate: z.object({ certPem: text(65_536), keyPem: text(65_536), clientCa: clientCa.optional() }),
      /** A session's rates are capped (quota throttling); undefined lifts the cap. */
      rates: z.object({ sessionId, up: z.number().optional(), down: z.number().optional() }),
    },
  },
  toMain: {
    requests: {
      login: { body: loginBody, answer: loginAnswer },
      connect: { body: z.object({ headers, clientIp: text(64) }), answer: connectAnswer },
      /** A request for one of SAML's pages (the login redirect, the ACS, metadata, the final page), answered by the main process's service provider. */
      samlPage: { body: samlPageRequest, answer: samlPageAnswer },
    },
    notes: {
      /** A connection of the session is up on this worker (its number tells it from the worker's others). */
      attached: z.object({ sessionId, connection: z.number().int(), info: connectionInfo }),
      /** The connection went away without a logout: the session waits for its client (cookie timeout). */
      detached: z.object({ sessionId, connection: z.number().int() }),
      /** The client logged out. */
      ended: z.object({ sessionId, reason: endReason }),
      channel: z.object({ sessionId, channel: z.enum(["cstp", "dtls"]), cipher: text(256) }),
      traffic: z.object({ counts: z.array(counts).max(100_000) }),
      /** The worker's drop and login-front counters so far (totals, not increments), once a second. */
      counters: workerCounters,
      /** Sessions whose effective rate caps (bits/s, null: none) or policy drops changed since the last report (once a second). */
      firewall: z.object({ sessions: z.array(z.tuple([sessionId, z.number().nullable(), z.number().nullable(), z.record(text(64), z.number().int().min(0))])).max(100_000) }),
      dropNotice: z.object({ sessionId, rule: z.union([z.number().int(), text(64)]), peer: text(128), protocol: z.number().int(), port: z.number().int(), drops: z.number().int() }),
      /** The worker's TUN queue stopped delivering packets for good (TunLost: the device was deleted, a read failed). */
      tunLost: z.object({ why: text(1024) }),
    },
  },
};
export type TunnelProtocol = typeof tunnelProtocol;
