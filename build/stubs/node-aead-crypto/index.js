// Never loaded on Node >= 10, Bun or Deno (node-dtls-client uses node:crypto's AEAD there).
throw new Error("node-aead-crypto is stubbed out in gw (see package.json overrides)");
