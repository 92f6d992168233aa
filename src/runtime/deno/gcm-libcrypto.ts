import type { CreateGcmKey } from "../gcm.ts";
import { libcryptoGcm, type LibcryptoGcmCalls } from "../libcrypto-gcm.ts";
import { openFirst } from "../linux/libc-names.ts";
import { loadOnce } from "../load-once.ts";

/**
 * AES-GCM through the system's OpenSSL 3 libcrypto with Deno.dlopen (the calls of
 * libcrypto-gcm.ts). Without it, Deno's node:crypto built a cipher object per DTLS record; with
 * it, a record is two calls on the key's context. Buffers are passed as "buffer" (Deno takes a
 * view's own offset), so a record sealed at an offset costs one view, and one opened none.
 */
const EVP_CTRL_GCM_GET_TAG = 0x10;
const EVP_CTRL_GCM_SET_TAG = 0x11;
const EVP_CTRL_GCM_SET_IV_FIXED = 0x12;
const EVP_CTRL_AEAD_TLS1_AAD = 0x16;

const SYMBOLS = {
  EVP_CIPHER_CTX_new: { parameters: [], result: "pointer" },
  EVP_CIPHER_CTX_free: { parameters: ["pointer"], result: "void" },
  EVP_CIPHER_CTX_get_updated_iv: { parameters: ["pointer", "buffer", "usize"], result: "i32" },
  EVP_aes_128_gcm: { parameters: [], result: "pointer" },
  EVP_aes_256_gcm: { parameters: [], result: "pointer" },
  EVP_CipherInit_ex: { parameters: ["pointer", "pointer", "pointer", "buffer", "buffer", "i32"], result: "i32" },
  EVP_CipherUpdate: { parameters: ["pointer", "buffer", "buffer", "buffer", "i32"], result: "i32" },
  EVP_CipherFinal_ex: { parameters: ["pointer", "buffer", "buffer"], result: "i32" },
  EVP_CIPHER_CTX_ctrl: { parameters: ["pointer", "i32", "i32", "buffer"], result: "i32" },
  EVP_Cipher: { parameters: ["pointer", "buffer", "buffer", "u32"], result: "i32" },
} as const;

type Ctx = NonNullable<Deno.PointerValue>;

const open = () => openFirst((name) => Deno.dlopen(name, SYMBOLS), ["libcrypto.so.3", "libcrypto.so"]).symbols;

function load(): LibcryptoGcmCalls<Ctx> | undefined {
  let c: ReturnType<typeof open>;
  try {
    c = open();
  } catch {
    return undefined;
  }
  // The out-length word and a prefix or suffix byte, written and read within one call.
  const outl = new Int32Array(1);
  const oneByte = new Uint8Array(1);
  const update = (ctx: Ctx, out: Uint8Array | null, input: Uint8Array) => c.EVP_CipherUpdate(ctx, out, outl, input, input.length);
  return {
    newContext(keyLength) {
      const ctx = c.EVP_CIPHER_CTX_new();
      if (ctx === null) return null;
      const cipher = keyLength === 32 ? c.EVP_aes_256_gcm() : c.EVP_aes_128_gcm();
      if (c.EVP_CipherInit_ex(ctx, cipher, null, null, null, 1) === 1) return ctx;
      c.EVP_CIPHER_CTX_free(ctx);
      return null;
    },
    setKey: (ctx, key, encrypt) => c.EVP_CipherInit_ex(ctx, null, null, key, null, encrypt ? 1 : 0) === 1,
    setFixedIv: (ctx, salt) => c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4, salt) === 1,
    readIv: (ctx, out) => c.EVP_CIPHER_CTX_get_updated_iv(ctx, out, out.length) === 1,
    restoreIv: (ctx, iv) => c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv) === 1,
    sealWithNonce(ctx, nonce, aad, plaintext, out, outOffset, prefix, suffix) {
      c.EVP_CipherInit_ex(ctx, null, null, null, nonce, 1);
      update(ctx, null, aad);
      let at = outOffset;
      if (prefix !== undefined) {
        // GCM streams: one byte now, the rest in the next update, same ciphertext as one call.
        oneByte[0] = prefix;
        update(ctx, out.subarray(at), oneByte);
        at++;
      }
      if (plaintext.length > 0) update(ctx, out.subarray(at), plaintext);
      at += plaintext.length;
      if (suffix !== undefined) {
        oneByte[0] = suffix;
        update(ctx, out.subarray(at), oneByte);
        at++;
      }
      const tail = out.subarray(at);
      c.EVP_CipherFinal_ex(ctx, tail, outl);
      c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tail);
    },
    sealInPlace(ctx, nonce, aad, buffer, offset, length) {
      c.EVP_CipherInit_ex(ctx, null, null, null, nonce, 1);
      update(ctx, null, aad);
      const body = buffer.subarray(offset, offset + length);
      if (length > 0) c.EVP_CipherUpdate(ctx, body, outl, body, length);
      const tag = buffer.subarray(offset + length, offset + length + 16);
      c.EVP_CipherFinal_ex(ctx, tag, outl);
      c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag);
    },
    openWithNonce(ctx, nonce, aad, buffer, offset, length) {
      c.EVP_CipherInit_ex(ctx, null, null, null, nonce, 0);
      update(ctx, null, aad);
      const body = buffer.subarray(offset, offset + length);
      if (length > 0 && c.EVP_CipherUpdate(ctx, body, outl, body, length) !== 1) return false;
      const tag = buffer.subarray(offset + length, offset + length + 16);
      if (c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) !== 1) return false;
      return c.EVP_CipherFinal_ex(ctx, tag, outl) === 1;
    },
    recordAad: (ctx, pseudoHeader) => c.EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, pseudoHeader),
    cipherInPlace(ctx, buffer, offset, length) {
      const body = offset === 0 && length === buffer.length ? buffer : buffer.subarray(offset, offset + length);
      return c.EVP_Cipher(ctx, body, body, length);
    },
  };
}

export const createGcmKey: CreateGcmKey = libcryptoGcm(loadOnce(load));
