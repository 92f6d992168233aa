/** @jsxImportSource hono/jsx */
import { protocols } from "../../firewall/rule.ts";
import type { TraceOutcome } from "../trace-form.ts";

export interface TraceBoxProps {
  /** The page the GET form goes back to. */
  action: string;
  outcome?: TraceOutcome;
  /** The group page asks which user (optional); the user page knows it and offers the user's groups instead. */
  askUser: boolean;
  groups?: readonly string[];
  /** The group asked for on the user page. */
  group?: string;
  intro: string;
}

/** "Can alice reach 198.51.100.10 tcp/22?": a GET form, so it works for read-only accounts too. */
export function TraceBox(props: TraceBoxProps) {
  const q = props.outcome?.form ?? { user: "", to: "", proto: "tcp", port: "", direction: "outbound" };
  const a = props.outcome?.answer;
  return (
    <section class="panel" aria-labelledby="trace-title">
      <h2 id="trace-title">Policy trace</h2>
      <p class="muted">{props.intro}</p>
      <form class="toolbar" method="get" action={props.action}>
        {props.askUser && (
          <label for="t-user">
            User (blank: a member without rules of their own)
            <input id="t-user" name="user" value={q.user} autocomplete="off" />
          </label>
        )}
        {props.groups && props.groups.length > 1 && (
          <label for="t-group">
            Group
            <select id="t-group" name="group">
              {props.groups.map((g) => (
                <option value={g} selected={g === props.group}>
                  {g}
                </option>
              ))}
            </select>
          </label>
        )}
        <label for="t-to">
          Address (IPv4 or IPv6)
          <input id="t-to" name="to" value={q.to} placeholder="198.51.100.10" autocomplete="off" required />
        </label>
        <label for="t-proto">
          Protocol
          <select id="t-proto" name="proto">
            {protocols.map((p) => (
              <option value={p} selected={p === q.proto}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label for="t-port">
          Port
          <input id="t-port" name="port" value={q.port} inputmode="numeric" autocomplete="off" />
        </label>
        <label for="t-direction">
          Direction
          <select id="t-direction" name="direction">
            {(["outbound", "inbound"] as const).map((d) => (
              <option value={d} selected={d === q.direction}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary">
          Trace
        </button>
      </form>
      {props.outcome?.error && (
        <p class="field-error" role="alert" id="trace-error">
          {props.outcome.error}
        </p>
      )}
      {a && (
        <p class={a.allowed ? "trace allowed" : "trace denied"} role="status" id="trace-result">
          <strong>{a.allowed ? "Allowed" : "Denied"}</strong>
          {`: ${a.reason} (${a.user ? `user ${a.user}` : "a member"}${a.group ? ` in group ${a.group}` : ", no group: the gateway's defaults"})`}
        </p>
      )}
    </section>
  );
}
