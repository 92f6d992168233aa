/**
 * AES-GCM with the key schedule kept: one context per key (one direction of a DTLS epoch), reset
 * with a new nonce per record. node:crypto needs a new cipher object per nonce (and allocates its
 * output); a runtime that can reach the system's libcrypto gives this instead (issue 13).
 *
 * Nonce 12 bytes, AAD 13 bytes (DTLS 1.2) or 5 (TLS 1.3), tag 16 bytes. Buffers are read and written during the call only.
 */
export interface GcmKey {
  /**
   * Encrypts `plaintext` into `out` at `outOffset`, the 16-byte tag right after the ciphertext.
   * `out` must be a buffer of at least 2 KiB the caller keeps (the runtime may pin it). A `prefix`
   * byte (0..255) is encrypted first, as if it led the plaintext, so callers need not copy to add one;
   * a `suffix` byte likewise after it (TLS 1.3's inner content type). The tag follows all of them.
   */
  seal(nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, out: Uint8Array, outOffset: number, prefix?: number, suffix?: number): void;
  /**
   * Decrypts `ciphertext` in place and checks `tag`; false when it does not authenticate (the
   * bytes are then garbage: a caller that must try the record again keeps a copy).
   */
  openInPlace(nonce: Uint8Array, aad: Uint8Array, ciphertext: Uint8Array, tag: Uint8Array): boolean;
  /** Frees the native context now instead of at a later collection; the key is not used again. */
  dispose?(): void;
}

/** A key of 16 or 32 bytes; undefined when the native library is missing (callers fall back to node:crypto). */
export type CreateGcmKey = (key: Uint8Array) => GcmKey | undefined;
