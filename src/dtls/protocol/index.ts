/** Socket-free DTLS server core (docs/protocol.md §7). Wiring to UDP and tunnel sessions lives elsewhere. */
export * from "./cipher-suites.ts";
export { deriveTrafficKeys, masterSecretFromPsk, pskPreMasterSecret, type TrafficKeys } from "./keys.ts";
export { prf, prfTls10, prfTls12, type PrfKind } from "./prf.ts";
export {
  ContentType,
  createRecordProtection,
  encodeRecord,
  parseRecord,
  parseRecordInto,
  parseRecords,
  RECORD_MALFORMED,
  ReusedRecord,
  type DtlsRecord,
  type RecordProtection,
} from "./record.ts";
export { ReplayWindow } from "./replay-window.ts";
export {
  DtlsServerHandshake,
  peekClientHelloSessionId,
  type ClientHelloIds,
  type DtlsEstablished,
  type DtlsHandshakeMode,
  type DtlsServerHandshakeOptions,
  type HandshakeState,
  type HandshakeStep,
} from "./server-handshake.ts";
