import { err, ok, type Result } from "../../errors.ts";

/** The login factors a group can require. */
export const AUTH_FACTORS = ["password", "otp", "certificate", "saml"] as const;
export type AuthFactor = (typeof AUTH_FACTORS)[number];

/** Factors that say who the user is; "otp" only confirms someone already identified. */
const IDENTIFYING: ReadonlySet<AuthFactor> = new Set(["password", "certificate", "saml"]);

/**
 * A group's login methods: alternatives (OR) separated by "|", each a chain of factors (AND, in
 * order) joined by "+", e.g. "password+otp|certificate". The first factor of a chain identifies the
 * user; a password after a certificate must be the certificate holder's.
 */
export type AuthMethods = AuthFactor[][];

export const DEFAULT_AUTH = "password";

export function parseAuthMethods(text: string): Result<AuthMethods> {
  const alternatives: AuthMethods = [];
  for (const alternative of text.split("|")) {
    const chain = alternative.split("+").map((f) => f.trim());
    for (const factor of chain) {
      if (!(AUTH_FACTORS as readonly string[]).includes(factor)) {
        return err("invalid_auth", `unknown login factor "${factor}" in "${text}": use ${AUTH_FACTORS.join(", ")}, joined by + (all of) or | (one of)`);
      }
    }
    const factors = chain as AuthFactor[];
    if (!IDENTIFYING.has(factors[0]!)) return err("invalid_auth", `"${alternative}" must start with password, certificate or saml: otp only confirms who logged in`);
    if (new Set(factors).size !== factors.length) return err("invalid_auth", `"${alternative}" names a factor twice`);
    if (factors.slice(1).some((f) => f === "certificate" || f === "saml")) {
      return err("invalid_auth", `"${alternative}": certificate and saml can only come first (the certificate travels in the TLS handshake, SAML replaces the form)`);
    }
    alternatives.push(factors);
  }
  return ok(alternatives);
}

export function formatAuthMethods(methods: AuthMethods): string {
  return methods.map((chain) => chain.join("+")).join("|");
}

/** The chain a login identified by `first` continues with, or undefined when the group does not allow it. */
export function chainStartingWith(methods: AuthMethods, first: AuthFactor): AuthFactor[] | undefined {
  return methods.find((chain) => chain[0] === first);
}
