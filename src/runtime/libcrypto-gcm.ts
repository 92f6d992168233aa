import type { CreateGcmKey, GcmKey } from "./gcm.ts";
import { GcmContextPool, type PooledKey } from "./gcm-context-pool.ts";

/**
 * AES-GCM through the system's OpenSSL 3 libcrypto, the key schedule and GHASH tables kept in an
 * EVP_CIPHER_CTX: the part both runtimes share. Each runtime's FFI gives the calls
 * (bun/gcm-libcrypto.ts, deno/gcm-libcrypto.ts); this decides which a key may make. A key sealing
 * with the caller's nonces (TLS 1.3 records) is re-initialised with only a new IV per record, its
 * output written straight into the caller's buffer; DTLS record keys open and seal records in place
 * in libssl's record mode. Measured under Bun: 0.6 µs per 1400-byte seal against 1.7 to 2.0 µs for
 * createCipheriv per record, and no allocation. Without libcrypto.so.3 the gateway keeps node:crypto.
 *
 * A key does not own a context: it holds its key bytes, and borrows a context from a pool shared
 * by the keys of its kind (gcm-context-pool.ts) when it is used and has none. A context is about
 * 1.4 KiB of libcrypto's memory and a session has four keys, most of them idle at any moment: the
 * pool keeps what is in use and re-keys a context for a key that comes back (about 0.4 µs). So
 * memory per session no longer pays for contexts, and nothing has to be freed when a key is
 * dropped (issue 13: memory per session, and the collector's walk over finalizers).
 */
export interface LibcryptoGcmCalls<Ctx> {
  /** A context for AES-GCM with a key of `keyLength` bytes, not keyed yet. Null when refused. */
  newContext(keyLength: 16 | 32): Ctx | null;
  /** Keys (or re-keys) a context for encryption (`encrypt`) or decryption; true when taken. The key schedule and GHASH tables are computed again, the cipher kept. */
  setKey(ctx: Ctx, key: Uint8Array, encrypt: boolean): boolean;
  /** EVP_CTRL_GCM_SET_IV_FIXED with the 4-byte salt: record mode (sealing draws the rest at random). True when taken. */
  setFixedIv(ctx: Ctx, salt: Uint8Array): boolean;
  /** A sealing record key's whole 12-byte IV, the next record's (EVP_CIPHER_CTX_get_updated_iv), into `out`. True when read. */
  readIv(ctx: Ctx, out: Uint8Array): boolean;
  /** EVP_CTRL_GCM_SET_IV_FIXED with −1: record mode again with the whole IV read before, so the count goes on. True when taken. */
  restoreIv(ctx: Ctx, iv: Uint8Array): boolean;
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
  /** EVP_CTRL_AEAD_TLS1_AAD with the 13-byte pseudo-header; libcrypto's answer (> 0 when taken). */
  recordAad(ctx: Ctx, pseudoHeader: Uint8Array): number;
  /** EVP_Cipher in place over `length` bytes of `buffer` from `offset` (inside it); libcrypto's answer (≥ 0 when done). */
  cipherInPlace(ctx: Ctx, buffer: Uint8Array, offset: number, length: number): number;
}

/** A DTLS 1.2 GCM record's body holds at least its explicit nonce and its tag. */
const RECORD_NONCE_AND_TAG = 8 + 16;

/** What a key's context was set up for: its calls differ and must not mix. */
type Use = typeof SEALS_WITH_NONCES | typeof OPENS_RECORDS | typeof SEALS_RECORDS | typeof OPENS_WITH_NONCES;
const SEALS_WITH_NONCES = 0;
const OPENS_RECORDS = 1;
const SEALS_RECORDS = 2;
const OPENS_WITH_NONCES = 3;
/** Whether a key of this use encrypts (its context is keyed for encryption). */
const seals = (use: Use): boolean => use === SEALS_WITH_NONCES || use === SEALS_RECORDS;
/** GCM's tag, after the ciphertext. */
const TAG_BYTES = 16;
/** A record key's salt, and the whole IV a sealing record key keeps while it has no context. */
const SALT_BYTES = 4;
const IV_BYTES = 12;

/**
 * The calls and what keys of one factory share: a pool per use and key length (contexts never
 * change kind, so no state of one use is left for another), and buffers with their own memory for
 * the bytes handed to libcrypto (key, salt, IV), wiped after each call.
 */
class Shared<Ctx extends object | number | bigint> {
  readonly pools: GcmContextPool<Ctx, LibcryptoGcmKey<Ctx>>[] = [];
  readonly key16 = new Uint8Array(new ArrayBuffer(16));
  readonly key32 = new Uint8Array(new ArrayBuffer(32));
  readonly salt = new Uint8Array(new ArrayBuffer(SALT_BYTES));
  readonly iv = new Uint8Array(new ArrayBuffer(IV_BYTES));

  constructor(readonly c: LibcryptoGcmCalls<Ctx>) {}

  pool(use: Use, keyLength: 16 | 32): GcmContextPool<Ctx, LibcryptoGcmKey<Ctx>> {
    const at = use * 2 + (keyLength === 32 ? 1 : 0);
    return (this.pools[at] ??= new GcmContextPool(() => this.c.newContext(keyLength)));
  }
}

/** CreateGcmKey over a runtime's calls; `calls` undefined (no libcrypto) gives undefined keys. */
export function libcryptoGcm<Ctx extends object | number | bigint>(calls: () => LibcryptoGcmCalls<Ctx> | undefined): CreateGcmKey {
  let shared: Shared<Ctx> | undefined;
  return (key, salt, records = "open") => {
    const c = calls();
    if (!c || (key.length !== 16 && key.length !== 32) || (salt && salt.length !== SALT_BYTES)) return undefined;
    shared ??= new Shared(c);
    // A key without a salt is initialised again with each record's nonce (the key schedule stays).
    // A record key works in libssl's record mode, its salt fixed: opening (enc 0), the rest of each
    // nonce is read from the record; sealing (enc 1), libcrypto draws the rest at random once and
    // counts up from there, writing it into each record.
    const use: Use = !salt ? (records === "open-with-nonces" ? OPENS_WITH_NONCES : SEALS_WITH_NONCES) : records === "seal" ? SEALS_RECORDS : OPENS_RECORDS;
    const gcm = new LibcryptoGcmKey(shared, shared.pool(use, key.length as 16 | 32), use, key, salt);
    // Keyed now, so a key libcrypto refuses is refused here (callers then keep node:crypto).
    return gcm.tryFirstContext() ? gcm : undefined;
  };
}

/** One key: its bytes, and a context of its pool while it holds one. A class, not closures: four keys per session (issue 13: memory per session). */
class LibcryptoGcmKey<Ctx extends object | number | bigint> implements GcmKey, PooledKey<Ctx> {
  private disposed = false;
  /** A sealing record key whose next IV could not be saved when it lost its context: it seals no more. */
  private spent = false;
  /** The pool's slot this key last held; it holds it while the pool's owner of that slot is this key. */
  private slot = -1;
  /** The key's bytes, then the salt of a record key, then (sealing record keys) the whole IV saved when its context was taken. Never handed to libcrypto itself: copied into the shared buffers. */
  private readonly material: Uint8Array;
  private ivSaved = false;
  private readonly keyLength: number;

  constructor(
    private readonly shared: Shared<Ctx>,
    private readonly pool: GcmContextPool<Ctx, LibcryptoGcmKey<Ctx>>,
    private readonly use: Use,
    key: Uint8Array,
    salt: Uint8Array | undefined,
  ) {
    this.keyLength = key.length;
    this.material = new Uint8Array(key.length + (salt ? SALT_BYTES : 0) + (use === SEALS_RECORDS ? IV_BYTES : 0));
    this.material.set(key);
    if (salt) this.material.set(salt, key.length);
  }

  /** Takes a context and keys it; false (the key unusable) when libcrypto refuses. */
  tryFirstContext(): boolean {
    if (this.takeContext() !== null) return true;
    this.material.fill(0);
    this.disposed = true;
    return false;
  }

  /** The context this key holds, or one taken and keyed now. */
  private context(): Ctx {
    const pool = this.pool;
    if (pool.ownerOf(this.slot) === this) return pool.touch(this.slot);
    if (this.disposed) throw new Error("AES-GCM key used after dispose");
    if (this.spent) throw new Error("AES-GCM record key lost its nonce count (libcrypto gave no IV to keep): the DTLS channel must be set up again");
    const ctx = this.takeContext();
    if (ctx === null) throw new Error("AES-GCM: libcrypto gave no context or refused a key it had taken before (out of memory?)");
    return ctx;
  }

  /** A context of the pool keyed for this key, or null (any context taken is wiped and given back). */
  private takeContext(): Ctx | null {
    const slot = this.pool.take(this);
    if (slot < 0) return null;
    const ctx = this.pool.context(slot);
    if (!this.install(ctx)) {
      this.wipe(ctx); // the key may have been taken before its salt or IV was refused
      this.pool.release(slot);
      return null;
    }
    this.slot = slot;
    return ctx;
  }

  /** Keys `ctx` for this key: its bytes, then its salt, or the IV it left with. */
  private install(ctx: Ctx): boolean {
    const { c } = this.shared;
    const keyLength = this.keyLength;
    const key = keyLength === 32 ? this.shared.key32 : this.shared.key16;
    copy(this.material, 0, key, keyLength);
    const keyed = c.setKey(ctx, key, seals(this.use));
    key.fill(0);
    if (!keyed) return false;
    if (this.use === SEALS_RECORDS && this.ivSaved) {
      const iv = this.shared.iv;
      copy(this.material, keyLength + SALT_BYTES, iv, IV_BYTES);
      const restored = c.restoreIv(ctx, iv);
      iv.fill(0);
      return restored;
    }
    if (this.use === SEALS_RECORDS || this.use === OPENS_RECORDS) {
      const salt = this.shared.salt;
      copy(this.material, keyLength, salt, SALT_BYTES);
      return c.setFixedIv(ctx, salt);
    }
    return true;
  }

  /**
   * The pool takes this key's context for another: a sealing record key keeps its next IV, so
   * its records' nonces go on counting where they stopped (never twice under one key). A key
   * whose IV cannot be read is spent: it throws when used again rather than draw a new start.
   */
  evicted(ctx: Ctx): void {
    if (this.use !== SEALS_RECORDS) return;
    const iv = this.shared.iv;
    if (this.shared.c.readIv(ctx, iv)) {
      this.material.set(iv, this.material.length - IV_BYTES);
      this.ivSaved = true;
    } else {
      this.spent = true;
      this.material.fill(0);
    }
    iv.fill(0);
  }

  seal(nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, out: Uint8Array, outOffset: number, prefix?: number, suffix?: number): void {
    if (this.use !== SEALS_WITH_NONCES) throw new Error("AES-GCM record key asked to seal with a nonce");
    this.shared.c.sealWithNonce(this.context(), nonce, aad, plaintext, out, outOffset, prefix, suffix);
  }

  sealInPlace(nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): void {
    if (this.use !== SEALS_WITH_NONCES) throw new Error("AES-GCM record key asked to seal with a nonce");
    if (length < 0 || offset < 0 || offset + length + TAG_BYTES > buffer.length) throw new RangeError("AES-GCM: the record and its tag do not fit in the buffer");
    this.shared.c.sealInPlace(this.context(), nonce, aad, buffer, offset, length);
  }

  openWithNonce(nonce: Uint8Array, aad: Uint8Array, buffer: Uint8Array, offset: number, length: number): boolean {
    if (this.use !== OPENS_WITH_NONCES) throw new Error("AES-GCM key not made to open with nonces asked to open");
    if (length < 0 || offset < 0 || offset + length + TAG_BYTES > buffer.length) return false;
    return this.shared.c.openWithNonce(this.context(), nonce, aad, buffer, offset, length);
  }

  /** Wipes the key's bytes, and its context's key material if it holds one (re-keyed with zeros), and gives the context back. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.material.fill(0);
    if (this.pool.ownerOf(this.slot) !== this) return;
    this.wipe(this.pool.context(this.slot));
    this.pool.release(this.slot);
  }

  /** Keys `ctx` with zeros (the shared key buffers hold zeros between calls): it keeps nothing of this key. */
  private wipe(ctx: Ctx): void {
    this.shared.c.setKey(ctx, this.keyLength === 32 ? this.shared.key32 : this.shared.key16, seals(this.use));
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
    if (this.use !== use) throw new Error(use === OPENS_RECORDS ? "AES-GCM key not made to open records asked to open one" : "AES-GCM key not made to seal records asked to seal one");
    if (length < RECORD_NONCE_AND_TAG || offset < 0 || offset + length > buffer.length) return false;
    const ctx = this.context();
    if (this.shared.c.recordAad(ctx, pseudoHeader) <= 0) return false;
    return this.shared.c.cipherInPlace(ctx, buffer, offset, length) >= 0;
  }
}

/** `length` bytes of `from` from `at` into the start of `to`, without a view (a key taking a context allocates nothing). */
function copy(from: Uint8Array, at: number, to: Uint8Array, length: number): void {
  for (let i = 0; i < length; i++) to[i] = from[at + i]!;
}
