import { describe, expect, test } from "bun:test";
import { chainStartingWith, formatAuthMethods, parseAuthMethods } from "../../../../src/control/auth/auth-methods.ts";

describe("parseAuthMethods", () => {
  test("chains with + and alternatives with |", () => {
    const r = parseAuthMethods("password+otp|certificate|certificate+password|saml");
    expect(r.ok && r.value).toEqual([["password", "otp"], ["certificate"], ["certificate", "password"], ["saml"]]);
    if (r.ok) {
      expect(formatAuthMethods(r.value)).toBe("password+otp|certificate|certificate+password|saml");
      expect(chainStartingWith(r.value, "certificate")).toEqual(["certificate"]);
      expect(chainStartingWith(r.value, "password")).toEqual(["password", "otp"]);
    }
  });

  test("refuses unknown factors, otp first, repeats, and certificate or saml after the first place", () => {
    for (const [text, hint] of [
      ["pasword", "unknown login factor"],
      ["otp", "must start with"],
      ["password+password", "twice"],
      ["password+certificate", "can only come first"],
      ["password+saml", "can only come first"],
      ["", "unknown login factor"],
    ]) {
      const r = parseAuthMethods(text!);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("invalid_auth");
        expect(r.error.message).toContain(hint!);
      }
    }
  });
});
