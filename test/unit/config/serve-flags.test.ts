import { describe, expect, test } from "bun:test";
import { parseArgs, type ArgsDef } from "citty";
import { rejectUnknownOptions } from "../../../src/cli/args.ts";
import { gatewayConfigSchema } from "../../../src/config/gateway-config.ts";
import { overlayFlags, serveArgsDef, SERVE_FLAGS, settingsFromFlags } from "../../../src/config/serve-flags.ts";
import { valueKind } from "../../../src/config/setting-row.ts";
import { documentRows, exampleValue, rowOf } from "./setting-examples.ts";

const argsDef = serveArgsDef() as ArgsDef;

/** What `gw serve` does with its command line, short of starting: parse, read the flags, overlay, validate. */
function configFrom(rawArgs: string[], stored: Record<string, unknown> = {}) {
  const args = parseArgs(rawArgs, argsDef) as Record<string, unknown>;
  rejectUnknownOptions(rawArgs, argsDef);
  const flags = settingsFromFlags(args, rawArgs);
  if (!flags.ok) throw flags.error;
  return { config: gatewayConfigSchema.parse({ ...overlayFlags(stored, flags.value), dataDir: "/tmp/gw-test" }), flagged: Object.keys(flags.value) };
}

/** The command line that sets a row to its example value (and what it needs to its examples). */
function flagsFor(key: string): string[] {
  return [key, ...(rowOf(key).needs ?? [])].flatMap((k) => {
    const row = rowOf(k);
    if (row.flag === false) throw new Error(`${k} has no flag`);
    if (valueKind(row.schema) === "boolean") return [exampleValue(row) ? `--${row.flag}` : `--no-${row.flag}`];
    return [`--${row.flag}`, row.example!];
  });
}

describe("gw serve flags from the settings table", () => {
  test("every flag of the hand-written option list keeps its name", () => {
    const before = ["data-dir", "listen", "port", "udp-port", "dtls", "cert", "key", "tun", "pool", "cookie-timeout", "mtu", "dpd", "keepalive", "api-listen", "api-on-tunnel"];
    const saml = ["saml-idp-url", "saml-idp-cert", "saml-base-url", "saml-entity-id", "saml-group-attribute", "saml-user-attribute"];
    const certificates = ["client-ca", "crl", "cert-user-attribute"];
    for (const name of [...before, ...saml, ...certificates]) expect(Object.keys(argsDef)).toContain(name);
  });

  test.each(documentRows.filter((r) => r.flag !== false).map((r) => [r.key] as const))("the flag for %s reaches the config", (key) => {
    const { config, flagged } = configFrom(flagsFor(key));
    expect((config as Record<string, unknown>)[key]).toEqual(exampleValue(rowOf(key)));
    expect(flagged).toContain(key);
  });

  test("a flag wins over the stored document; settings without a flag keep the stored value", () => {
    const { config, flagged } = configFrom(["--mtu", "1300"], { mtu: 1200, dpd: 45 });
    expect(config).toMatchObject({ mtu: 1300, dpd: 45 });
    expect(flagged).toEqual(["mtu"]);
  });

  test("a boolean counts only when typed: --dtls turns a stored false back on, no flag keeps it", () => {
    expect(configFrom([], { dtls: false })).toMatchObject({ config: { dtls: false }, flagged: [] });
    expect(configFrom(["--dtls"], { dtls: false })).toMatchObject({ config: { dtls: true }, flagged: ["dtls"] });
    expect(configFrom(["--no-api-on-tunnel"]).config.apiOnTunnel).toBe(false);
  });

  test("--cert/--key replace a stored pair together; --client-ca drops a stored CRL", () => {
    const stored = { certFile: "/old/cert.pem", keyFile: "/old/key.pem", clientCaFile: "/old/ca.pem", crlFile: "/old/crl.pem" };
    const pair = configFrom(["--cert", "/new/cert.pem", "--key", "/new/key.pem"], stored).config;
    expect(pair).toMatchObject({ certFile: "/new/cert.pem", keyFile: "/new/key.pem", crlFile: "/old/crl.pem" });
    // One of the pair alone drops the stored other half: the schema then asks for both.
    expect(() => configFrom(["--cert", "/new/cert.pem"], stored)).toThrow(/--cert and --key go together/);
    const ca = configFrom(["--client-ca", "/new/ca.pem"], stored).config;
    expect(ca.clientCaFile).toBe("/new/ca.pem");
    expect(ca.crlFile).toBeUndefined();
    expect(configFrom(["--client-ca", "/new/ca.pem", "--crl", "/new/crl.pem"], stored).config.crlFile).toBe("/new/crl.pem");
  });

  test("numbers must be whole numbers; unknown flags are refused", () => {
    const bad = settingsFromFlags(parseArgs(["--mtu", "14o0"], argsDef) as Record<string, unknown>, ["--mtu", "14o0"]);
    expect(bad.ok ? undefined : bad.error).toMatchObject({ code: "usage", message: '--mtu must be a whole number, got "14o0"' });
    expect(() => configFrom(["--mtus", "1400"])).toThrow("unknown option --mtus");
    expect(() => configFrom(["--no-mtu"])).toThrow("unknown option --no-mtu");
  });

  test("a boolean on by default is offered as --no-NAME; numbers show their unit's hint", () => {
    expect(SERVE_FLAGS.find((f) => f.name === "dtls")).toMatchObject({ kind: "boolean", defaultOn: true });
    expect(argsDef["cookie-timeout"]).toMatchObject({ type: "string", valueHint: "SECONDS" });
    expect(argsDef["data-dir"]?.description).toContain("$GW_DATA_DIR");
  });
});
