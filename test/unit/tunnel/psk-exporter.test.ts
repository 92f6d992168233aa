import { describe, expect, test } from "bun:test";
import type { TLSSocket } from "node:tls";
import { createPskExporter } from "../../../src/tunnel/psk-exporter.ts";

describe("createPskExporter", () => {
  test("asks the TLS connection for 32 bytes of EXPORTER-openconnect-psk with no context (docs/protocol.md §7.4)", () => {
    const calls: unknown[][] = [];
    const socket = { exportKeyingMaterial: (...args: unknown[]) => (calls.push(args), Buffer.alloc(32, 9)) } as unknown as TLSSocket;
    const psk = createPskExporter(() => {})(socket);
    expect(psk?.length).toBe(32);
    expect(calls).toEqual([[32, "EXPORTER-openconnect-psk"]]);
  });

  test("a runtime without the exporter gets no PSK, and the log says so once", () => {
    const logs: string[] = [];
    const exporter = createPskExporter((m) => logs.push(m));
    const socket = {
      exportKeyingMaterial: () => {
        throw new Error("not implemented");
      },
    } as unknown as TLSSocket;
    expect(exporter(socket)).toBeUndefined();
    expect(exporter(socket)).toBeUndefined();
    expect(logs.length).toBe(1);
    expect(logs[0]).toContain("PSK-NEGOTIATE DTLS is not offered, legacy DTLS is");
  });
});
