import { describe, expect, test } from "bun:test";
import { CertificateStep } from "../../../../src/control/auth/certificate-step.ts";
import { MAX_CODE_ATTEMPTS, OtpStep } from "../../../../src/control/auth/otp-step.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import {
  afterGroupRefused,
  afterNotAccepted,
  afterWrongAnswer,
  askAgain,
  presentedWithConnection,
  START_OVER,
} from "../../../../src/control/auth/retry-policy.ts";
import { SamlStep } from "../../../../src/control/auth/saml/saml-step.ts";

const wrong = (wrongAnswers: number, canIdentifyOtherwise = false) => ({ wrongAnswers, canIdentifyOtherwise: () => canIdentifyOtherwise });

describe("retry policies", () => {
  test("start over: every failure goes back to the identifying step; a group without the factor ends", () => {
    expect(afterWrongAnswer(START_OVER, wrong(1))).toEqual({ kind: "startOver", setAside: false });
    expect(afterWrongAnswer(START_OVER, wrong(50))).toEqual({ kind: "startOver", setAside: false });
    expect(afterGroupRefused(START_OVER)).toEqual({ kind: "startOver", setAside: false });
    expect(afterNotAccepted(START_OVER, () => true)).toEqual({ kind: "end" });
  });

  test("ask again: the same step until the limit, then the end with the policy's message", () => {
    const policy = askAgain(3, "Too many: log in again.");
    expect(afterWrongAnswer(policy, wrong(1))).toEqual({ kind: "askAgain" });
    expect(afterWrongAnswer(policy, wrong(2))).toEqual({ kind: "askAgain" });
    expect(afterWrongAnswer(policy, wrong(3))).toEqual({ kind: "end", message: "Too many: log in again." });
    expect(afterWrongAnswer(askAgain(1, "x"), wrong(1))).toEqual({ kind: "end", message: "x" });
  });

  test("presented with the connection: set aside when another factor may identify, else the end; a refused group ends", () => {
    const policy = presentedWithConnection("password");
    expect(afterWrongAnswer(policy, wrong(1, true))).toEqual({ kind: "startOver", setAside: true });
    expect(afterWrongAnswer(policy, wrong(1, false))).toEqual({ kind: "end" });
    expect(afterGroupRefused(policy)).toEqual({ kind: "end" });
  });

  test("presented with the connection: a group that does not take it gives way only to the named factor", () => {
    const policy = presentedWithConnection("password");
    const asked: string[] = [];
    expect(afterNotAccepted(policy, (f) => (asked.push(f), f === "password"))).toEqual({ kind: "startOver", setAside: true });
    expect(asked).toEqual(["password"]);
    expect(afterNotAccepted(policy, (f) => f === "saml")).toEqual({ kind: "end" });
  });

  test("only the fall-back policy asks whether another factor could identify (it reads the groups)", () => {
    let asked = 0;
    const counting = { wrongAnswers: 1, canIdentifyOtherwise: () => (asked++, true) };
    afterWrongAnswer(START_OVER, counting);
    afterWrongAnswer(askAgain(3, "x"), counting);
    expect(asked).toBe(0);
    afterWrongAnswer(presentedWithConnection("password"), counting);
    expect(asked).toBe(1);
  });
});

describe("each step declares its policy", () => {
  const never = () => {
    throw new Error("not used");
  };

  test("password and SAML start over; a one-time code is asked again; a certificate gives way to a password", () => {
    expect(new PasswordStep(never as never).retry).toBe(START_OVER);
    expect(new SamlStep(never as never).retry).toBe(START_OVER);
    expect(new OtpStep(never as never, Date.now).retry).toEqual(askAgain(MAX_CODE_ATTEMPTS, `Too many wrong one-time codes (${MAX_CODE_ATTEMPTS}): log in again.`));
    expect(new CertificateStep(never as never).retry).toEqual(presentedWithConnection("password"));
  });
});
