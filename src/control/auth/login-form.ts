/** A login prompt, independent of how the tunnel front renders it (XML today). */
export interface FormField {
  /** "sso": the answer comes from a browser login (docs/protocol.md §4.1), not from the user. */
  type: "text" | "password" | "hidden" | "sso";
  name: string;
  label: string;
  value?: string;
  /**
   * A text field whose value should not be echoed where the client can hide it: the spec's
   * challenge uses a text input named otp, openconnect's XML flow a password input (docs/protocol.md §2.7).
   */
  conceal?: boolean;
}

export interface GroupChoice {
  options: string[];
  selected?: string;
}

/** A single sign-on prompt: where the client's browser logs in (docs/protocol.md §4.2). */
export interface SsoPrompt {
  loginUrl: string;
  /** Webview mode: the login is over when the browser reaches this URL. */
  finalUrl: string;
  tokenCookie: string;
  errorCookie: string;
  /** "external": the client's own browser, the token handed over through localhost (§4.3). */
  browserMode: "external" | "webview";
}

export interface LoginForm {
  /** "main" for the first step, "challenge" for later factors (docs/protocol.md §2.7). */
  authId: string;
  message: string;
  error?: string;
  fields: FormField[];
  groupChoice?: GroupChoice;
  sso?: SsoPrompt;
}
