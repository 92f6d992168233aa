/**
 * `gw serve --saml-idp-url URL --saml-idp-cert FILE --saml-base-url URL`: incomplete or bad SAML
 * settings stop the start with one clear line and exit code 1.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewaySettingsSchema } from "../../src/config/gateway-config.ts";
import { gwArgv } from "../harness/gateway.ts";

const work = mkdtempSync(join(tmpdir(), "gw-saml-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const garbage = join(work, "garbage.pem");
writeFileSync(garbage, "not a certificate\n");

const serve = (args: string[]) => {
  const r = spawnSync(gwArgv("sources")[0]!, [...gwArgv("sources").slice(1), "serve", "--data-dir", join(work, "data"), "--listen", "127.0.0.1", "--port", "18453", "--api-listen", "127.0.0.1:18454", "--tun", "gwsaml0", "--no-dtls", ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stderr: r.stderr.trim() };
};
const saml = (cert: string) => ["--saml-idp-url", "https://idp.example/sso", "--saml-idp-cert", cert, "--saml-base-url", "https://vpn.example"];

describe("SAML settings", () => {
  test("the three required settings go together; URLs are checked", () => {
    const ok = gatewaySettingsSchema.safeParse({ samlIdpUrl: "https://idp.example/sso", samlIdpCertFile: "/x.pem", samlBaseUrl: "https://vpn.example", samlGroupAttribute: "memberOf" });
    expect(ok.success).toBe(true);
    const partial = gatewaySettingsSchema.safeParse({ samlIdpUrl: "https://idp.example/sso" });
    expect(partial.success).toBe(false);
    expect(partial.error!.issues.map((i) => i.path.join("."))).toEqual(["samlIdpCertFile", "samlBaseUrl"]);
    expect(gatewaySettingsSchema.safeParse({ samlIdpUrl: "nope", samlIdpCertFile: "/x.pem", samlBaseUrl: "https://vpn.example" }).success).toBe(false);
    expect(gatewaySettingsSchema.safeParse({ samlIdpUrl: "https://idp.example/sso", samlIdpCertFile: "/x.pem", samlBaseUrl: "https://vpn.example/" }).success).toBe(false);
    expect(gatewaySettingsSchema.safeParse({ samlIdpUrl: "ftp://idp.example/sso", samlIdpCertFile: "/x.pem", samlBaseUrl: "https://vpn.example" }).success).toBe(false);
  });

  test("gw serve with only some SAML flags: invalid_config naming what is missing", () => {
    const r = serve(["--saml-idp-url", "https://idp.example/sso"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith("gw: invalid_config: ");
    expect(r.stderr).toContain("samlIdpCertFile");
  });

  test("gw serve with an unreadable or non-certificate IdP certificate: one line, exit 1", () => {
    const missing = serve(saml(join(work, "missing.pem")));
    expect(missing.stderr.split("\n")).toHaveLength(1);
    expect(missing.stderr).toStartWith("gw: saml_idp_cert_unreadable: ");
    expect(missing.code).toBe(1);
    const bad = serve(saml(garbage));
    expect(bad.stderr).toStartWith("gw: saml_idp_cert_invalid: ");
    expect(bad.stderr).toContain("garbage.pem");
    expect(bad.code).toBe(1);
  });
});
