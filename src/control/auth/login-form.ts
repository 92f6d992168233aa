/** A login prompt, independent of how the tunnel front renders it (XML today). */
export interface FormField {
  type: "text" | "password" | "hidden";
  name: string;
  label: string;
  value?: string;
  /**
   * A text field whose value should not be echoed where the client can hide it: the spec's
   * challenge uses a text input named otp, openconnect's XML flow a password input (PROTOCOL.md §2.7).
   */
  conceal?: boolean;
}

export interface GroupChoice {
  options: string[];
  selected?: string;
}

export interface LoginForm {
  /** "main" for the first step, "challenge" for later factors (PROTOCOL.md §2.7). */
  authId: string;
  message: string;
  error?: string;
  fields: FormField[];
  groupChoice?: GroupChoice;
}
