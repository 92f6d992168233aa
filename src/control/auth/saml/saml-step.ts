import { err, ok, type Result } from "../../../errors.ts";
import type { UserRecord } from "../../../store/records.ts";
import type { AuthStep, LoginClient, LoginContext, StepResult } from "../auth-step.ts";
import type { FormField, SsoPrompt } from "../login-form.ts";
import { START_OVER } from "../retry-policy.ts";
import type { SamlLogins } from "./saml-logins.ts";
import { SAML_PATHS, SSO_ERROR_COOKIE, SSO_TOKEN_COOKIE } from "./saml-paths.ts";
import { parseClientDhKey } from "./sso-handoff.ts";

export const SSO_FIELD = "sso-token";
export const CAP_SSO_V2 = "single-sign-on-v2";
export const CAP_EXTERNAL_BROWSER = "single-sign-on-external-browser";

export interface SamlStepOptions {
  logins: SamlLogins;
  /** How browsers reach the tunnel port, e.g. https://vpn.example.com. */
  baseUrl: string;
  /** The stored user of that name: SAML logins do not create users. */
  findUser(name: string): UserRecord | undefined;
  groupExists(name: string): boolean;
}

/**
 * SAML single sign-on as an identifying factor. The form holds one `sso` input; the client runs
 * a browser login (docs/protocol.md §4) and posts the one-time token the ACS issued. The asserted
 * user must exist in gw and be enabled; with a group attribute configured, the asserted groups
 * that exist in gw replace the stored ones for this login.
 */
export class SamlStep implements AuthStep {
  readonly factor = "saml";
  /** Its failures refuse at once; a group refused after it starts the login over. */
  readonly retry = START_OVER;

  constructor(private readonly o: SamlStepOptions) {}

  message(): string {
    return "Complete the login in your browser.";
  }

  fields(): FormField[] {
    return [{ type: "sso", name: SSO_FIELD, label: "SSO token:" }];
  }

  sso(context: LoginContext, client: LoginClient): Result<SsoPrompt> {
    if (!client.capabilities.includes(CAP_SSO_V2)) {
      return err(
        "sso_unsupported",
        "This login uses SAML single sign-on, which this client did not offer (no single-sign-on-v2): use AnyConnect, or openconnect 9 with --external-browser.",
      );
    }
    const external = client.capabilities.includes(CAP_EXTERNAL_BROWSER);
    if (external) {
      const key = parseClientDhKey(client.ssoDhPubkey);
      if (!key.ok) return key;
    }
    const attempt = this.o.logins.begin(context.id, external ? "external" : "webview", external ? client.ssoDhPubkey : undefined);
    return ok({
      loginUrl: `${this.o.baseUrl}${SAML_PATHS.login}?handle=${attempt.handle}`,
      finalUrl: `${this.o.baseUrl}${SAML_PATHS.final}`,
      tokenCookie: SSO_TOKEN_COOKIE,
      errorCookie: SSO_ERROR_COOKIE,
      browserMode: external ? "external" : "webview",
    });
  }

  async submit(context: LoginContext, answers: ReadonlyMap<string, string>): Promise<StepResult> {
    const token = (answers.get(SSO_FIELD) ?? "").trim();
    if (!token) return { kind: "refused", error: "The single sign-on returned no token: log in again.", reason: "sso_no_token" };
    const assertion = this.o.logins.redeem(context.id, token);
    if (!assertion.ok) return { kind: "refused", error: refusalText(assertion.error.code, assertion.error.message), reason: assertion.error.code };
    const { userName, groups } = assertion.value;
    context.lastUserName = userName;
    const user = this.o.findUser(userName);
    if (!user) {
      return { kind: "refused", error: `User ${userName} is not known to this gateway: ask your administrator to add it (single sign-on does not create users).`, reason: "saml_user_unknown" };
    }
    if (user.disabled) return { kind: "refused", error: "This account is disabled: contact your administrator.", reason: "user_disabled" };
    if (groups === undefined) return { kind: "passed", user };
    const known = groups.filter((g) => this.o.groupExists(g));
    if (known.length === 0) {
      return { kind: "refused", error: `The identity provider puts ${userName} in no group of this gateway${groups.length ? ` (it says: ${groups.join(", ")})` : ""}.`, reason: "saml_no_group" };
    }
    return { kind: "passed", user: { ...user, groups: known } };
  }
}

function refusalText(code: string, message: string): string {
  return code.startsWith("saml_") ? `Single sign-on failed: ${message}.` : message;
}
