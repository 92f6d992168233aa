import { dlopen, ptr, type Pointer } from "bun:ffi";
import type { CreateGcmKey } from "../gcm.ts";
import { libcryptoGcm, type LibcryptoGcmCalls } from "../libcrypto-gcm.ts";
import { loadOnce } from "../load-once.ts";

/** AES-GCM through the system's OpenSSL 3 libcrypto with bun:ffi (the calls of libcrypto-gcm.ts). */

const EVP_CTRL_GCM_GET_TAG = 0x10;
const EVP_CTRL_GCM_SET_TAG = 0x11;
const EVP_CTRL_GCM_SET_IV_FIXED = 0x12;
const EVP_CTRL_AEAD_TLS1_AAD = 0x16;
const LIBRARIES = ["libcrypto.so.3", "libcrypto.so"];

function load() {
  for (const name of LIBRARIES) {
    try {
      return dlopen(name, {
        EVP_CIPHER_CTX_new: { args: [], returns: "ptr" },
        EVP_CIPHER_CTX_free: { args: ["ptr"], returns: "void" },
        EVP_CIPHER_CTX_get_updated_iv: { args: ["ptr", "ptr", "u64"], returns: "i32" },
        EVP_aes_128_gcm: { args: [], returns: "ptr" },
        EVP_aes_256_gcm: { args: [], returns: "ptr" },
        EVP_CipherInit_ex: { args: ["ptr", "ptr", "ptr", "ptr", "ptr", "i32"], returns: "i32" },
        // The input as a pointer: a record opened in place is read and written at the same address.
        EVP_CipherUpdate: { args: ["ptr", "ptr", "ptr", "ptr", "i32"], returns: "i32" },
        EVP_CipherFinal_ex: { args: ["ptr", "ptr", "ptr"], returns: "i32" },
        EVP_CIPHER_CTX_ctrl: { args: ["ptr", "i32", "i32", "ptr"], returns: "i32" },
        EVP_Cipher: { args: ["ptr", "ptr", "ptr", "u32"], returns: "i32" },
      }).symbols;
    } catch {
      // try the next name
    }
  }
  return undefined;
}

type Symbols = NonNullable<ReturnType<typeof load>>;

/**
 * The library and one scratch for its calls: the out-length word and a prefix or suffix byte,
 * written and read within one call, so every key of this thread (module instances are per
 * thread) shares it. One per key cost about 700 bytes of a session's memory each (issue 13).
 * Backed by an ArrayBuffer of its own: a small typed array may live in the GC heap and move when
 * first viewed, which would leave a taken pointer stale.
 */
class Libcrypto {
  readonly scratch = new Uint8Array(new ArrayBuffer(64));
  readonly outl: Pointer;
  readonly oneBytePtr: Pointer;

  constructor(readonly c: Symbols) {
    this.outl = ptr(this.scratch);
    this.oneBytePtr = ptr(this.scratch, 32);
  }
}

const calls = loadOnce((): LibcryptoGcmCalls<Pointer> | undefined => {
  const c = load();
  if (!c) return undefined;
  const lib = new Libcrypto(c);
  const { outl } = lib;
  return {
    newContext(keyLength) {
      const ctx = c.EVP_CIPHER_CTX_new() as Pointer | null; // bun:ffi gives a number for "ptr"
      if (!ctx) return null;
      const cipher = keyLength === 32 ? c.EVP_aes_256_gcm() : c.EVP_aes_128_gcm();
      if (c.EVP_CipherInit_ex(ctx, cipher, null, null, null, 1) === 1) return ctx;
      c.EVP_CIPHER_CTX_free(ctx);
      return null;
    },
    setKey: (ctx, key, encrypt) => c.EVP_CipherInit_ex(ctx, null, null, ptr(key), null, encrypt ? 1 : 0) === 1,
    setFixedIv: (ctx, salt) => c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4, ptr(salt)) === 1,
    readIv: (ctx, out) => c.EVP_CIPHER_CTX_get_updated_iv(ctx, ptr(out), out.length) === 1,
    restoreIv: (ctx, iv) => c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, ptr(iv)) === 1,
    sealWithNonce(ctx, nonce, aad, plaintext, out, outOffset, prefix, suffix) {
      c.EVP_CipherInit_ex(ctx, null, null, null, ptr(nonce), 1);
      c.EVP_CipherUpdate(ctx, null, outl, ptr(aad), aad.length);
      let at = ptr(out, outOffset);
      if (prefix !== undefined) {
        // GCM streams: one byte now, the rest in the next update, same ciphertext as one call.
        lib.scratch[32] = prefix;
        c.EVP_CipherUpdate(ctx, at, outl, lib.oneBytePtr, 1);
        at = (at + 1) as Pointer;
      }
      if (plaintext.length > 0) c.EVP_CipherUpdate(ctx, at, outl, ptr(plaintext), plaintext.length);
      at = (at + plaintext.length) as Pointer;
      if (suffix !== undefined) {
        lib.scratch[32] = suffix;
        c.EVP_CipherUpdate(ctx, at, outl, lib.oneBytePtr, 1);
        at = (at + 1) as Pointer;
      }
      c.EVP_CipherFinal_ex(ctx, at, outl);
      c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, at);
    },
    sealInPlace(ctx, nonce, aad, buffer, offset, length) {
      c.EVP_CipherInit_ex(ctx, null, null, null, ptr(nonce), 1);
      c.EVP_CipherUpdate(ctx, null, outl, ptr(aad), aad.length);
      const at = ptr(buffer, offset);
      if (length > 0) c.EVP_CipherUpdate(ctx, at, outl, at, length);
      const tag = (at + length) as Pointer;
      c.EVP_CipherFinal_ex(ctx, tag, outl);
      c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag);
    },
    openWithNonce(ctx, nonce, aad, buffer, offset, length) {
      c.EVP_CipherInit_ex(ctx, null, null, null, ptr(nonce), 0);
      c.EVP_CipherUpdate(ctx, null, outl, ptr(aad), aad.length);
      const at = ptr(buffer, offset);
      if (length > 0 && c.EVP_CipherUpdate(ctx, at, outl, at, length) !== 1) return false;
      const tag = (at + length) as Pointer;
      if (c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) !== 1) return false;
      return c.EVP_CipherFinal_ex(ctx, tag, outl) === 1;
    },
    recordAad: (ctx, pseudoHeader) => c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, ptr(pseudoHeader)),
    cipherInPlace(ctx, buffer, offset, length) {
      const at = ptr(buffer, offset);
      return c.EVP_Cipher(ctx, at, at, length);
    },
  };
});

export const createGcmKey: CreateGcmKey = libcryptoGcm(calls);
