import type { CreateGcmKey, GcmKey } from "./gcm.ts";

/**
 * AES-GCM through the system's OpenSSL 3 libcrypto, one EVP_CIPHER_CTX per key with its key
 * schedule and GHASH tables kept: the part both runtimes share. Each runtime's FFI gives the calls
 * (bun/gcm-libcrypto.ts, deno/gcm-libcrypto.ts); this decides which a key may make. A key sealing
 * with the caller's nonces (TLS 1.3 records) is re-initialised with only a new IV per record, its
 * output written straight into the caller's buffer; DTLS record keys open and seal records in place
 * in libssl's record mode. Measured under Bun: 0.6 µs per 1400-byte seal against 1.7 to 2.0 µs for
 * createCipheriv per record, and no allocation. Without libcrypto.so.3 the gateway keeps node:crypto.
 */
export interface LibcryptoGcmCalls<Ctx> {
  /** A context keyed for encryption (`encrypt`) or decryption; `iv` null for record keys. Null when refused. */
  newContext(key: Uint8Array, iv: Uint8Array | null, encrypt: boolean): Ctx | null;
  /** EVP_CTRL_GCM_SET_IV_FIXED with the 4-byte salt: record mode. True when taken. */
  setFixedIv(ctx: Ctx, salt: Uint8Array): boolean;
  free(ctx: Ctx): void;
  /**
   * One record sealed with the caller's nonce (GcmKey.seal): a new IV, the AAD, the optional
   * prefix byte, the plaintext, the optional suffix byte, the final block and the tag, written
   * into `out` from `outOffset`.
   */
  sealWithNonce(ctx: Ctx, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, out: Uint8Array, outOffset: number, prefix?: number, suffix?: number): void;
  /**
   * One record sealed in place with the caller's nonce (GcmKey.sealInPlace): a new IV, the AAD,
   * `length` bytes of `buffer` from `offset` encrypted where they are, the final block, and the
   * tag written right after them.
   */
  sealInPlace(ctx: Ctx, nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): void;
  /**
   * One record opened with the caller's nonce (GcmKey.openWithNonce): a new IV, the AAD, the
   * ciphertext decrypted in place (`length` bytes of `buffer` from `offset`, the 16-byte tag
   * right after them), the expected tag, the final block. True when the tag matched.
   */
  openWithNonce(ctx: Ctx, nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean;
  /**
   * Optional: contexts freed by the collector itself. `tie` makes an object that frees `ctx` when
   * the collector frees it (null when it cannot); the key holds it instead of registering with a
   * FinalizationRegistry, whose live registrations JavaScriptCore walks at every collection, eden
   * ones too: four keys a session, over a millisecond a second at 4,000 sessions (issue 13).
   * `wipe` (EVP_CIPHER_CTX_reset) clears a tied context's key material at dispose; the collector
   * frees what is left.
   */
  collector?: { tie(ctx: Ctx): object | null; wipe(ctx: Ctx): void };
  /** EVP_CTRL_AEAD_TLS1_AAD with the 13-byte pseudo-header; libcrypto's answer (> 0 when taken). */
  recordAad(ctx: Ctx, pseudoHeader: Uint8Array): number;
  /** EVP_Cipher in place over `length` bytes of `buffer` from `offset` (inside it); libcrypto's answer (≥ 0 when done). */
  cipherInPlace(ctx: Ctx, buffer: Uint8Array, offset: number, length: number): number;
}

/** A DTLS 1.2 GCM record's body holds at least its explicit nonce and its tag. */
const RECORD_NONCE_AND_TAG = 8 + 16;

/** CreateGcmKey over a runtime's calls; `calls` undefined (no libcrypto) gives undefined keys. */
export function libcryptoGcm<Ctx extends object | number | bigint>(calls: () => LibcryptoGcmCalls<Ctx> | undefined): CreateGcmKey {
  let contexts: FinalizationRegistry<Ctx> | undefined;
  return (key, salt, records = "open") => {
    const c = calls();
    if (!c || (key.length !== 16 && key.length !== 32) || (salt && salt.length !== 4)) return undefined;
    // A key without a salt is initialised again with each record's nonce (the key schedule stays).
    // A record key works in libssl's record mode, its salt fixed: opening (enc 0), the rest of each
    // nonce is read from the record; sealing (enc 1), libcrypto draws the rest at random once and
    // counts up from there, writing it into each record.
    const use: Use = !salt ? (records === "open-with-nonces" ? OPENS_WITH_NONCES : SEALS_WITH_NONCES) : records === "seal" ? SEALS_RECORDS : OPENS_RECORDS;
    const keyCopy = new Uint8Array(key);
    const ctx = c.newContext(keyCopy, salt ? null : new Uint8Array(12), use === SEALS_WITH_NONCES || use === SEALS_RECORDS);
    keyCopy.fill(0);
    if (ctx === null) return undefined;
    if (salt && !c.setFixedIv(ctx, new Uint8Array(salt))) {
      c.free(ctx);
      return undefined;
    }
    const tied = c.collector?.tie(ctx) ?? null;
    if (tied !== null) return new LibcryptoGcmKey(c, ctx, use, tied);
    contexts ??= new FinalizationRegistry<Ctx>((held) => c.free(held));
    const gcm = new LibcryptoGcmKey(c, ctx, use, contexts);
    contexts.register(gcm, ctx, gcm);
    return gcm;
  };
}

/** What a key's context was set up for: its calls differ and must not mix. */
type Use = typeof SEALS_WITH_NONCES | typeof OPENS_RECORDS | typeof SEALS_RECORDS | typeof OPENS_WITH_NONCES;
const SEALS_WITH_NONCES = 0;
const OPENS_RECORDS = 1;
const SEALS_RECORDS = 2;
const OPENS_WITH_NONCES = 3;
/** GCM's tag, after the ciphertext. */
const TAG_BYTES = 16;

/** One key's context. A class, not closures: three keys per session (issue 13: memory per session). */
class LibcryptoGcmKey<Ctx extends object | number | bigint> implements GcmKey {
  private disposed = false;

  constructor(
    private readonly c: LibcryptoGcmCalls<Ctx>,
    private readonly ctx: Ctx,
    private readonly use: Use,
    /** What frees the context if dispose is never called: the registry it is registered with, or the object it is tied to (collector). */
    private readonly lifetime: FinalizationRegistry<Ctx> | object,
  ) {}

  seal(nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, out: Uint8Array, outOffset: number, prefix?: number, suffix?: number): void {
    if (this.disposed) throw new Error("AES-GCM key used after dispose"); // a freed context would crash the process
    if (this.use !== SEALS_WITH_NONCES) throw new Error("AES-GCM record key asked to seal with a nonce");
    this.c.sealWithNonce(this.ctx, nonce, aad, plaintext, out, outOffset, prefix, suffix);
  }

  sealInPlace(nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): void {
    if (this.disposed) throw new Error("AES-GCM key used after dispose");
    if (this.use !== SEALS_WITH_NONCES) throw new Error("AES-GCM record key asked to seal with a nonce");
    if (length < 0 || offset < 0 || offset + length + TAG_BYTES > buffer.length) throw new RangeError("AES-GCM: the record and its tag do not fit in the buffer");
    this.c.sealInPlace(this.ctx, nonce, aad, buffer, offset, length);
  }

  openWithNonce(nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean {
    if (this.disposed) throw new Error("AES-GCM key used after dispose");
    if (this.use !== OPENS_WITH_NONCES) throw new Error("AES-GCM key not made to open with nonces asked to open");
    if (length < 0 || offset < 0 || offset + length + TAG_BYTES > buffer.length) return false;
    return this.c.openWithNonce(this.ctx, nonce, aad, buffer, offset, length);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.lifetime instanceof FinalizationRegistry) {
      this.lifetime.unregister(this);
      this.c.free(this.ctx);
    } else {
      this.c.collector!.wipe(this.ctx); // the tied object frees the rest when collected
    }
  }

  /**
   * Opening: the AAD's length field holds the whole fragment's (libcrypto takes off the nonce and
   * tag); one call reads the explicit nonce, decrypts and checks the tag. Two calls instead of
   * five: measured under Bun 0.31 against 0.40 µs per 100-byte record, and 16 to 19 against 23
   * to 29 µs when cold after 10 ms idle (issue 13: ping RTT).
   */
  openRecordInPlace(pseudoHeader: Uint8Array, fragment: Uint8Array): boolean {
    return this.inRecordMode(OPENS_RECORDS, pseudoHeader, fragment, 0, fragment.length);
  }

  /**
   * Sealing: the AAD's length field holds the nonce's and the plaintext's; one call writes the
   * explicit nonce, encrypts and writes the tag. Two calls instead of six (a nonce, the AAD, the
   * type byte, the packet, the final block, the tag).
   */
  sealRecordInPlace(pseudoHeader: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean {
    return this.inRecordMode(SEALS_RECORDS, pseudoHeader, buffer, offset, length);
  }

  /**
   * libssl's record mode, either way: the AAD control, then EVP_Cipher in place over the body
   * (`length` bytes of `buffer` from `offset`, which must lie inside it). A refused AAD leaves the
   * context out of record mode, where EVP_Cipher would not check a tag (opening) or write one
   * (sealing): never go on without it (libcrypto's own state refuses too today; this does not
   * rely on it).
   */
  private inRecordMode(use: typeof OPENS_RECORDS | typeof SEALS_RECORDS, pseudoHeader: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean {
    if (this.disposed) throw new Error("AES-GCM key used after dispose");
    if (this.use !== use) throw new Error(use === OPENS_RECORDS ? "AES-GCM key not made to open records asked to open one" : "AES-GCM key not made to seal records asked to seal one");
    if (length < RECORD_NONCE_AND_TAG || offset < 0 || offset + length > buffer.length) return false;
    if (this.c.recordAad(this.ctx, pseudoHeader) <= 0) return false;
    return this.c.cipherInPlace(this.ctx, buffer, offset, length) >= 0;
  }
}
