/**
 * Record protection throughput: seal/open per second for 1400-byte plaintexts.
 *   ./node_modules/.bin/bun scripts/bench/dtls-record.ts [seconds-per-case]
 */
import { randomBytes } from "node:crypto";
import { findLegacySuite, PSK_AES256_GCM_SHA384, type DtlsSuite } from "../../src/dtls/protocol/cipher-suites.ts";
import { keyBlockLength, splitKeyBlock } from "../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, parseRecord } from "../../src/dtls/protocol/record.ts";
import { createGcmKey } from "../../src/runtime/bun/gcm-libcrypto.ts";

const seconds = Number(process.argv[2] ?? 1);
const SIZE = 1400;

function bench(label: string, fn: (i: number) => void): number {
  for (let i = 0; i < 2000; i++) fn(i); // warm-up
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let k = 0; k < 256; k++) fn(n++);
  }
  const rate = n / ((performance.now() - start) / 1000);
  console.log(`${label.padEnd(44)} ${Math.round(rate).toLocaleString("en-US").padStart(10)} rec/s  ${((rate * SIZE * 8) / 1e9).toFixed(2)} Gbit/s`);
  return rate;
}

const cases: [string, DtlsSuite][] = [
  ["AES256-GCM-SHA384 (DTLS 1.2)", findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!],
  ["AES128-GCM-SHA256 (DTLS 1.2)", findLegacySuite("X-DTLS12", "AES128-GCM-SHA256")!],
  ["PSK-AES256-GCM-SHA384", PSK_AES256_GCM_SHA384],
  ["AES256-SHA (DTLS 0.9, CBC+HMAC-SHA1)", findLegacySuite("X-DTLS", "AES256-SHA")!],
  ["AES128-SHA (DTLS 0.9, CBC+HMAC-SHA1)", findLegacySuite("X-DTLS", "AES128-SHA")!],
];

console.log(`Bun ${Bun.version}, ${SIZE}-byte plaintexts, ${seconds}s per case`);
for (const [name, suite] of cases) {
  const keys = splitKeyBlock(suite, new Uint8Array(randomBytes(keyBlockLength(suite))));
  const server = createRecordProtection(suite, keys, "server");
  const client = createRecordProtection(suite, keys, "client");
  const pt = new Uint8Array(randomBytes(SIZE));
  bench(`seal ${name}`, (i) => server.seal(ContentType.applicationData, 1, i, pt));
  // Open a pool of distinct client records (parsing included, as the UDP path will do).
  const pool = Array.from({ length: 1024 }, (_, i) => client.seal(ContentType.applicationData, 1, i, pt));
  bench(`open ${name}`, (i) => {
    const r = parseRecord(pool[i & 1023]);
    if (!r.ok) throw r.error;
    const o = server.open(r.value);
    if (!o.ok) throw o.error;
  });
  if (suite.kind !== "gcm") continue;
  // The gateway's data path with the runtime's libcrypto contexts: sealed into a kept buffer, opened in place.
  const native = createRecordProtection(suite, keys, "server", createGcmKey);
  const out = new Uint8Array(4096);
  bench(`sealInto ${name} (libcrypto)`, (i) => native.sealInto(ContentType.applicationData, 1, i, pt, out));
  const copies = pool.map((r) => new Uint8Array(r));
  bench(`openRecord ${name} (libcrypto, in place)`, (i) => {
    const bytes = copies[i & 1023]!;
    bytes.set(pool[i & 1023]!); // in place: restore the ciphertext first (the copy is part of the figure)
    const r = parseRecord(bytes);
    if (!r.ok) throw r.error;
    if (!native.openRecord(r.value)) throw new Error("open failed");
  });
}
