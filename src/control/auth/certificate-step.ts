import { certificateMatchesUser, type CertUserAttribute, type ClientCertificateInfo } from "../../pki/verify-client-cert.ts";
import type { UserRecord } from "../../store/records.ts";
import type { AuthStep, LoginClient, LoginContext, StepResult } from "./auth-step.ts";
import type { FormField } from "./login-form.ts";
import { presentedWithConnection } from "./retry-policy.ts";

export interface CertificateStepOptions {
  /** The stored user of this exact name, if any. */
  findUser(name: string): UserRecord | undefined;
  /** Which certificate attribute holds the user name (`gw serve --cert-user-attribute`). */
  attribute: CertUserAttribute;
}

const ATTRIBUTE_NAMES: Record<CertUserAttribute, string> = {
  cn: "subject common name (CN)",
  uid: "subject UID",
  email: "subject emailAddress",
  "san-email": "subjectAltName email",
};

/**
 * The client certificate of the TLS handshake, already checked against the configured CA by
 * the tunnel front (LoginClient.certificate), identifies the user: the configured attribute's
 * value is the user name. No fields: the flow runs it without asking (docs/protocol.md §3.3,
 * certificate-only logins complete at the first request).
 */
export class CertificateStep implements AuthStep {
  readonly factor = "certificate";
  /**
   * The certificate comes with the TLS connection: asking again would present the same one. A bad
   * one gives way to another identifying factor if the group allows one (else the login ends); a
   * good one whose user's group takes no certificate gives way to that group's password.
   */
  readonly retry = presentedWithConnection("password");

  constructor(private readonly o: CertificateStepOptions) {}

  message(): string {
    return "Logging in with your client certificate.";
  }

  fields(): FormField[] {
    return [];
  }

  async submit(context: LoginContext, _answers: ReadonlyMap<string, string>, client: LoginClient): Promise<StepResult> {
    const certificate = client.certificate;
    if (!certificate) {
      return {
        kind: "retry",
        error: "This group logs in with a client certificate, and none was presented: configure one in the client (openconnect --certificate user.p12).",
        reason: "cert_missing",
      };
    }
    if (!certificate.ok) return { kind: "retry", error: certificate.error.message, reason: certificate.error.code };
    const info = certificate.value;
    const names = namesIn(info, this.o.attribute);
    if (names.length === 0) {
      return {
        kind: "retry",
        error: `The client certificate "${info.subject}" has no ${ATTRIBUTE_NAMES[this.o.attribute]}, which names the user on this gateway.`,
        reason: "cert_no_user_name",
      };
    }
    context.lastUserName = names[0];
    const user = this.userFor(info, names);
    if (!user) {
      return { kind: "retry", error: `The client certificate names ${names.join(", ")}, but there is no user named ${names[0]}.`, reason: "cert_unknown_user" };
    }
    context.lastUserName = user.name;
    if (user.disabled) return { kind: "refused", error: "This account is disabled: contact your administrator.", reason: "user_disabled" };
    return { kind: "passed", user };
  }

  /** The first name that is a user's, looked up as written and (email) in lower case. */
  private userFor(info: ClientCertificateInfo, names: string[]): UserRecord | undefined {
    const email = this.o.attribute === "email" || this.o.attribute === "san-email";
    for (const name of names) {
      for (const candidate of email ? [name, name.toLowerCase()] : [name]) {
        const user = this.o.findUser(candidate);
        if (user && certificateMatchesUser(info, user.name, this.o.attribute)) return user;
      }
    }
    return undefined;
  }
}

function namesIn(info: ClientCertificateInfo, attribute: CertUserAttribute): string[] {
  const values: (string | undefined)[] = {
    cn: [info.subjectCN],
    uid: [info.uid],
    email: [info.subjectEmail],
    "san-email": info.emails,
  }[attribute];
  return values.filter((v): v is string => v !== undefined && v !== "");
}
