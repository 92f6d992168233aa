import { describe, expect, test } from "bun:test";
import {
  chooseLegacySuite,
  choosePskSuite,
  dataMtu,
  DTLS0_9,
  DTLS1_2,
  findLegacySuite,
  LEGACY_SUITES,
  parseCipherList,
  PSK_AES128_GCM_SHA256,
  PSK_AES256_GCM_SHA384,
} from "../../../../src/dtls/protocol/cipher-suites.ts";

describe("legacy suite table (§7.2)", () => {
  test("same name, different meaning under the two headers", () => {
    const a = findLegacySuite("X-DTLS", "AES128-SHA")!;
    const b = findLegacySuite("X-DTLS12", "AES128-SHA")!;
    expect(a.version).toBe(DTLS0_9);
    expect(a.prf).toBe("tls10");
    expect(b.version).toBe(DTLS1_2);
    expect(b.prf).toBe("sha256");
    expect(a.id).toBe(0x002f);
    expect(b.id).toBe(0x002f);
  });

  test("GCM suites and their PRF hashes", () => {
    expect(findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")).toMatchObject({ id: 0x009d, prf: "sha384", encKeyLength: 32, fixedIvLength: 4, kind: "gcm" });
    expect(findLegacySuite("X-DTLS", "OC-DTLS1_2-AES256-GCM")).toMatchObject({ id: 0x009d, prf: "sha384", version: DTLS1_2 });
    expect(findLegacySuite("X-DTLS", "OC-DTLS1_2-AES128-GCM")).toMatchObject({ id: 0x009c, prf: "sha256" });
    expect(findLegacySuite("X-DTLS12", "ECDHE-RSA-AES256-GCM-SHA384")).toMatchObject({ id: 0xc030, prf: "sha384" });
    expect(findLegacySuite("X-DTLS12", "ECDHE-RSA-AES128-GCM-SHA256")).toMatchObject({ id: 0xc02f, prf: "sha256" });
  });

  test("never DES or CHACHA", () => {
    expect(LEGACY_SUITES.some((s) => /DES|CHACHA/.test(s.name))).toBe(false);
    expect(chooseLegacySuite({ dtlsList: ["DES-CBC3-SHA", "OC2-DTLS1_2-CHACHA20-POLY1305"] })).toBeUndefined();
  });
});

describe("chooseLegacySuite (ocserv order, §7.1)", () => {
  const openconnect12 = parseCipherList("ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-GCM-SHA256:AES256-SHA:AES128-SHA");
  const openconnectDtls = parseCipherList("OC-DTLS1_2-AES256-GCM:OC-DTLS1_2-AES128-GCM:AES256-SHA:AES128-SHA:PSK-NEGOTIATE:OC2-DTLS1_2-CHACHA20-POLY1305");

  test("DTLS12 list wins with AES256-GCM-SHA384", () => {
    const c = chooseLegacySuite({ dtls12List: openconnect12, dtlsList: openconnectDtls })!;
    expect(c.name).toBe("AES256-GCM-SHA384");
    expect(c.header).toBe("X-DTLS12-CipherSuite");
    expect(c.suite.id).toBe(0x009d);
  });

  test("AES128-GCM-SHA256 beats everything in the X-DTLS list", () => {
    const c = chooseLegacySuite({ dtls12List: ["AES128-GCM-SHA256"], dtlsList: openconnectDtls })!;
    expect(c.name).toBe("AES128-GCM-SHA256");
    expect(c.header).toBe("X-DTLS12-CipherSuite");
  });

  test("ECDHE-RSA spelling alone is accepted", () => {
    const c = chooseLegacySuite({ dtls12List: ["ECDHE-RSA-AES256-GCM-SHA384"] })!;
    expect(c.name).toBe("ECDHE-RSA-AES256-GCM-SHA384");
    expect(c.suite.id).toBe(0xc030);
  });

  test("without DTLS12: OC GCM > AES256-SHA > AES128-SHA, answered under X-DTLS-CipherSuite", () => {
    expect(chooseLegacySuite({ dtlsList: openconnectDtls })).toMatchObject({ name: "OC-DTLS1_2-AES256-GCM", header: "X-DTLS-CipherSuite" });
    expect(chooseLegacySuite({ dtlsList: ["OC-DTLS1_2-AES128-GCM", "AES256-SHA"] })!.name).toBe("OC-DTLS1_2-AES128-GCM");
    const c = chooseLegacySuite({ dtlsList: ["AES128-SHA", "AES256-SHA"] })!;
    expect(c.name).toBe("AES256-SHA");
    expect(c.suite.version).toBe(DTLS0_9);
    expect(chooseLegacySuite({ dtlsList: ["AES128-SHA"] })!.suite.version).toBe(DTLS0_9);
  });

  test("X-DTLS 0.9 CBC beats DTLS12 CBC; DTLS12 CBC only as last resort", () => {
    expect(chooseLegacySuite({ dtls12List: ["AES256-SHA"], dtlsList: ["AES128-SHA"] })).toMatchObject({ name: "AES128-SHA", header: "X-DTLS-CipherSuite" });
    const c = chooseLegacySuite({ dtls12List: ["AES256-SHA"] })!;
    expect(c.header).toBe("X-DTLS12-CipherSuite");
    expect(c.suite.version).toBe(DTLS1_2);
  });

  test("nothing usable", () => {
    expect(chooseLegacySuite({})).toBeUndefined();
    expect(chooseLegacySuite({ dtlsList: ["PSK-NEGOTIATE"] })).toBeUndefined();
  });

  test("parseCipherList", () => {
    expect(parseCipherList(" A : B::C ")).toEqual(["A", "B", "C"]);
    expect(parseCipherList(undefined)).toEqual([]);
  });
});

describe("PSK suites", () => {
  test("00A9 preferred over 00A8", () => {
    expect(choosePskSuite([0xccab, 0x00a8, 0x00a9])).toBe(PSK_AES256_GCM_SHA384);
    expect(choosePskSuite([0x00a8])).toBe(PSK_AES128_GCM_SHA256);
    expect(choosePskSuite([0xccab, 0xc0a5])).toBeUndefined();
  });
});

describe("dataMtu (§7.7)", () => {
  test("observed values at base MTU 1400", () => {
    expect(dataMtu(findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!, 1400)).toBe(1334);
    expect(dataMtu(findLegacySuite("X-DTLS", "AES128-SHA")!, 1400)).toBe(1306);
    expect(dataMtu(PSK_AES256_GCM_SHA384, 1400)).toBe(1334);
  });

  test("IPv6 outer header costs 20 more bytes", () => {
    expect(dataMtu(findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!, 1400, { ipv6: true })).toBe(1314);
  });

  test("CBC result always fits: plaintext+1 ‖ MAC ‖ ≥1 pad in whole blocks", () => {
    const s = findLegacySuite("X-DTLS", "AES256-SHA")!;
    for (let link = 600; link <= 1500; link++) {
      const mtu = dataMtu(s, link);
      const ct = Math.ceil((mtu + 1 + 20 + 1) / 16) * 16;
      expect(20 + 8 + 13 + 16 + ct).toBeLessThanOrEqual(link);
      const ct2 = Math.ceil((mtu + 2 + 20 + 1) / 16) * 16; // one byte more no longer fits
      expect(20 + 8 + 13 + 16 + ct2).toBeGreaterThan(link);
    }
  });
});
