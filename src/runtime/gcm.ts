/**
 * AES-GCM with the key schedule kept: a key (one direction of a DTLS epoch, or the CSTP record
 * reader or writer) reuses one context for every record while it is in use (libcrypto-gcm.ts lends
 * contexts from a pool, so idle keys hold none). node:crypto needs a new cipher object per nonce
 * (and allocates its output); a runtime that can reach the system's libcrypto gives this instead
 * (issue 13).
 *
 * A key made without a salt seals with a nonce the caller gives each record (seal), or, made with
 * "open-with-nonces", opens that way (openWithNonce: the CSTP record reader); one made with
 * its direction's 4-byte salt opens DTLS 1.2 records (openRecordInPlace: the record carries the
 * rest of the nonce) or, when made to seal them, seals them (sealRecordInPlace: the key chooses the
 * rest). Never both ways. Buffers are read and written during the call only.
 */
export interface GcmKey {
  /**
   * Encrypts `plaintext` into `out` at `outOffset`, the 16-byte tag right after the ciphertext.
   * `out` must be a buffer of at least 2 KiB the caller keeps (the runtime may pin it). A `prefix`
   * byte (0..255) is encrypted first, as if it led the plaintext, so callers need not copy to add one;
   * a `suffix` byte likewise after it (TLS 1.3's inner content type). The tag follows all of them.
   * Nonce 12 bytes, AAD 13 bytes (DTLS 1.2) or 5 (TLS 1.3). Sealing keys only.
   */
  seal(nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, out: Uint8Array, outOffset: number, prefix?: number, suffix?: number): void;
  /**
   * Seals `length` bytes of `buffer` from `offset` in place with the caller's nonce, the 16-byte
   * tag written right after them: a TLS 1.3 record whose plaintext (inner content type included)
   * the caller wrote straight into its batch, so no frame is built apart and copied in. `buffer`
   * is one the caller keeps, as for seal. Sealing keys only; a runtime without it leaves it out
   * (callers then use seal).
   */
  sealInPlace?(nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): void;
  /**
   * Opens a TLS 1.3 record's body in place with the caller's nonce: `length` bytes of ciphertext
   * in `buffer` from `offset`, the 16-byte tag right after them, `aad` the record's 5-byte header.
   * True when it authenticates: the plaintext is then in place of the ciphertext; else those bytes
   * are garbage. Keys made with "open-with-nonces" only; a runtime without it leaves it out.
   */
  openWithNonce?(nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean;
  /**
   * Opens a DTLS 1.2 AES-GCM record's body in place, in one call as libssl does: `fragment` is the
   * explicit nonce (8 bytes) ‖ ciphertext ‖ tag (16), `pseudoHeader` the 13-byte AAD (epoch and
   * sequence number, type, version) whose length field holds the whole fragment's length. True
   * when it authenticates: the plaintext is then fragment[8 .. length − 16]; else those bytes are
   * garbage (a caller that must try the record again keeps a copy). Opening keys only.
   */
  openRecordInPlace(pseudoHeader: Uint8Array, fragment: Uint8Array): boolean;
  /**
   * Seals a DTLS 1.2 AES-GCM record's body in place, in one call as libssl does: the body is
   * `length` bytes of `buffer` from `offset` (a view would cost an allocation per record): room for
   * the explicit nonce (8 bytes; the key writes it: a counter from a random start, so never twice
   * under one key) ‖ the plaintext ‖ room for the tag (16 bytes). `pseudoHeader` is the 13-byte AAD
   * (epoch and sequence number, type, version) whose length field holds the explicit nonce's and
   * the plaintext's length (the key takes off the nonce's 8). False when the library refused: the
   * body then still holds plaintext and must not be sent. Keys made to seal records only; a runtime
   * without it leaves it out (callers then use seal).
   */
  sealRecordInPlace?(pseudoHeader: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean;
  /**
   * Wipes the key's material now (its bytes, and the native context it holds, which goes back to
   * be lent again) instead of leaving it for a later collection; the key is not used again.
   */
  dispose?(): void;
}

/**
 * A key of 16 or 32 bytes; with `salt` (4 bytes) one for DTLS records, which opens them unless
 * `records` is "seal"; without, one that seals with the caller's nonces, or opens with them when
 * `records` is "open-with-nonces". Undefined when the native library is missing (callers fall
 * back to node:crypto).
 */
export type CreateGcmKey = (key: Uint8Array, salt?: Uint8Array, records?: "open" | "seal" | "open-with-nonces") => GcmKey | undefined;
