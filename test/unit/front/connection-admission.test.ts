import { describe, expect, test } from "bun:test";
import { ConnectionAdmission, type AdmissionSlot } from "../../../src/front/connection-admission.ts";

const admitted = (a: ConnectionAdmission, address: string): AdmissionSlot => {
  const r = a.admit(address);
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.slot;
};

describe("ConnectionAdmission", () => {
  test("refuses an address past its limit while other addresses still get in", () => {
    const a = new ConnectionAdmission({ maxPerAddress: 3, maxTotal: 100 });
    for (let i = 0; i < 3; i++) admitted(a, "203.0.113.2");
    expect(a.admit("203.0.113.2")).toEqual({ ok: false, reason: "per_address_limit" });
    admitted(a, "203.0.113.3");
    expect(a.count("203.0.113.2")).toBe(3);
    expect(a.count()).toBe(4);
  });

  test("refuses everyone past the total limit", () => {
    const a = new ConnectionAdmission({ maxPerAddress: 10, maxTotal: 4 });
    for (let i = 0; i < 4; i++) admitted(a, `203.0.113.${i + 1}`);
    expect(a.admit("203.0.113.99")).toEqual({ ok: false, reason: "total_limit" });
  });

  test("a released slot makes room again; releasing twice frees one place only", () => {
    const a = new ConnectionAdmission({ maxPerAddress: 2, maxTotal: 100 });
    const first = admitted(a, "203.0.113.2");
    admitted(a, "203.0.113.2");
    expect(a.admit("203.0.113.2").ok).toBe(false);
    first.release();
    first.release();
    expect(a.count("203.0.113.2")).toBe(1);
    expect(a.count()).toBe(1);
    admitted(a, "203.0.113.2");
    expect(a.admit("203.0.113.2").ok).toBe(false);
  });

  test("forgets an address once its last connection is released", () => {
    const a = new ConnectionAdmission({ maxPerAddress: 2, maxTotal: 1000 });
    const slots = Array.from({ length: 1000 }, (_, i) => admitted(a, `10.0.${i >> 8}.${i & 255}`));
    for (const s of slots) s.release();
    expect(a.count()).toBe(0);
    expect((a as unknown as { perAddress: Map<string, number> }).perAddress.size).toBe(0);
  });

  test("an IPv4 client seen as ::ffff:a.b.c.d counts as a.b.c.d", () => {
    const a = new ConnectionAdmission({ maxPerAddress: 1, maxTotal: 100 });
    admitted(a, "203.0.113.2");
    expect(a.admit("::ffff:203.0.113.2")).toEqual({ ok: false, reason: "per_address_limit" });
  });
});
