import { describe, expect, test } from "bun:test";
import { durationOption, UsageError } from "../../../src/cli/args.ts";
import { pinDigest } from "../../../src/cli/https-transport.ts";
import { parseHostPort } from "../../../src/config/gateway-config.ts";
import { mergePatch } from "../../../src/control/patch.ts";
import { localUrl } from "../../../src/serve/api-discovery.ts";

describe("CLI and config parsing", () => {
  test("pins: the pin-sha256: form gw serve prints and the sha256/ form; anything else is refused", () => {
    const b64 = "ZAPFLVbaopFq2OsA+kJ74CybMQdlm+sO94J78EdJ8es=";
    expect(pinDigest(`pin-sha256:${b64}`)).toBe(b64);
    expect(pinDigest(`sha256/${b64}`)).toBe(b64);
    expect(pinDigest("sha1/abc")).toBeUndefined();
    expect(pinDigest(`pin-sha256:${b64.slice(1)}`)).toBeUndefined();
  });

  test("durations for --expires", () => {
    expect(durationOption("30d", "expires")).toBe(30 * 86400_000);
    expect(durationOption("12h", "expires")).toBe(12 * 3600_000);
    expect(durationOption("90m", "expires")).toBe(90 * 60_000);
    expect(() => durationOption("soon", "expires")).toThrow(UsageError);
  });

  test("HOST:PORT for --api-listen, and the URL a local client uses", () => {
    expect(parseHostPort("0.0.0.0:8443")).toEqual({ host: "0.0.0.0", port: 8443 });
    expect(parseHostPort("[::1]:9443")).toEqual({ host: "::1", port: 9443 });
    expect(parseHostPort("localhost:1")).toEqual({ host: "127.0.0.1", port: 1 });
    for (const bad of ["8443", "host.example:8443", "1.2.3.4:0", "1.2.3.4:70000", "::1:8443"]) expect(parseHostPort(bad)).toBeUndefined();
    expect(localUrl("0.0.0.0", 8443)).toBe("https://127.0.0.1:8443");
    expect(localUrl("::", 8443)).toBe("https://[::1]:8443");
    expect(localUrl("192.0.2.1", 9443)).toBe("https://192.0.2.1:9443");
  });

  test("merge patch: fields replace, null removes, non-objects are refused", () => {
    expect(mergePatch({ a: 1, b: 2 }, { b: null, c: 3 })).toEqual({ ok: true, value: { a: 1, c: 3 } });
    expect(mergePatch({ a: 1 }, [1]).ok).toBe(false);
    expect(mergePatch({ a: 1 }, "x").ok).toBe(false);
  });
});
