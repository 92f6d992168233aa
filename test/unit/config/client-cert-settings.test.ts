import { describe, expect, test } from "bun:test";
import { gatewaySettingsSchema } from "../../../src/config/gateway-config.ts";

describe("client-certificate settings", () => {
  test("optional: the defaults have none, so no certificate is requested", () => {
    const s = gatewaySettingsSchema.parse({});
    expect(s.clientCaFile).toBeUndefined();
    expect(s.crlFile).toBeUndefined();
    expect(s.certUserAttribute).toBeUndefined();
  });

  test("a CA file, its CRL and the user-name attribute", () => {
    const s = gatewaySettingsSchema.parse({ clientCaFile: "/etc/gw/ca.pem", crlFile: "/etc/gw/crl.pem", certUserAttribute: "san-email" });
    expect(s).toMatchObject({ clientCaFile: "/etc/gw/ca.pem", crlFile: "/etc/gw/crl.pem", certUserAttribute: "san-email" });
  });

  test("a CRL without a CA, and an unknown attribute, are refused with their paths", () => {
    const crl = gatewaySettingsSchema.safeParse({ crlFile: "/etc/gw/crl.pem" });
    expect(crl.success).toBe(false);
    expect(crl.error?.issues.map((i) => i.path.join("."))).toEqual(["crlFile"]);
    const attribute = gatewaySettingsSchema.safeParse({ clientCaFile: "/etc/gw/ca.pem", certUserAttribute: "serial" });
    expect(attribute.error?.issues.map((i) => i.path.join("."))).toEqual(["certUserAttribute"]);
  });
});
