import type { AuthFactor } from "./auth-methods.ts";

/**
 * What a step's failure leads to, owned by the step so the login pipeline stays one generic
 * loop. Three situations can fail a step:
 * - a wrong answer (the step's result is "retry");
 * - the user it identified is refused the group they asked for (not a member, unknown, misconfigured);
 * - the user's group has no method starting with this factor.
 */
export interface RetryPolicy {
  /** "startOver": back to the identifying step; "fallBack": this factor is set aside and another identifying one may take over. */
  readonly wrongAnswer: "startOver" | "fallBack" | { readonly askAgain: number; readonly exhausted: string };
  readonly groupRefused: "startOver" | "end";
  /** `fallBackTo`: when the group's methods start with that factor, the login starts over with it, this factor set aside. */
  readonly notAccepted: "end" | { readonly fallBackTo: AuthFactor };
}

/** What the pipeline does next. */
export type RetryDecision =
  /** The same step asks again, in the same login, with the step's error on the form. */
  | { kind: "askAgain" }
  /** The login starts over at its identifying step with the error on the form; `setAside`: without this factor. */
  | { kind: "startOver"; setAside: boolean }
  /** The login ends; `message` replaces the step's own error. */
  | { kind: "end"; message?: string };

/** A typed answer: a wrong one starts the login over, the identifying form again (password, SAML). */
export const START_OVER: RetryPolicy = { wrongAnswer: "startOver", groupRefused: "startOver", notAccepted: "end" };

/** A later factor (a one-time code): asked again within the login, `attempts` wrong answers at most, then the login ends. */
export function askAgain(attempts: number, exhausted: string): RetryPolicy {
  return { wrongAnswer: { askAgain: attempts, exhausted }, groupRefused: "startOver", notAccepted: "end" };
}

/**
 * An answer that comes with the connection (a client certificate): asking again would present
 * the same one. A bad one is set aside for another identifying factor if one may follow; a good
 * one for a group that does not take it gives way to `fallBackTo`; a refused group ends the login.
 */
export function presentedWithConnection(fallBackTo: AuthFactor): RetryPolicy {
  return { wrongAnswer: "fallBack", groupRefused: "end", notAccepted: { fallBackTo } };
}

export interface WrongAnswer {
  /** Wrong answers since the login (re)started, this one included. */
  wrongAnswers: number;
  /** Whether another factor may still identify the user (asked only by "fallBack"). */
  canIdentifyOtherwise(): boolean;
}

export function afterWrongAnswer(policy: RetryPolicy, wrong: WrongAnswer): RetryDecision {
  const rule = policy.wrongAnswer;
  if (rule === "startOver") return { kind: "startOver", setAside: false };
  if (rule === "fallBack") return wrong.canIdentifyOtherwise() ? { kind: "startOver", setAside: true } : { kind: "end" };
  return wrong.wrongAnswers < rule.askAgain ? { kind: "askAgain" } : { kind: "end", message: rule.exhausted };
}

export function afterGroupRefused(policy: RetryPolicy): RetryDecision {
  return policy.groupRefused === "startOver" ? { kind: "startOver", setAside: false } : { kind: "end" };
}

/** `groupStartsWith`: whether the user's group has a method starting with that factor. */
export function afterNotAccepted(policy: RetryPolicy, groupStartsWith: (factor: AuthFactor) => boolean): RetryDecision {
  const rule = policy.notAccepted;
  return rule !== "end" && groupStartsWith(rule.fallBackTo) ? { kind: "startOver", setAside: true } : { kind: "end" };
}
