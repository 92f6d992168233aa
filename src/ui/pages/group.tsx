/** @jsxImportSource hono/jsx */
import type { GroupView } from "../../control/groups.ts";
import { blankRule, isBlankRule, type GroupFormValues } from "../group-form.ts";
import type { TraceOutcome } from "../trace-form.ts";
import { ActionButton, CsrfField, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { FieldErrors, RefusedSummary } from "./field-errors.tsx";
import { Fieldset, ListField, RulesTable, TextField } from "./policy-fields.tsx";
import { TraceBox } from "./trace-box.tsx";
import { blankTest, isBlankTest } from "../policy-tests-form.ts";
import { PolicyTestsTable } from "./policy-tests-table.tsx";
import { QuotaFields } from "./quota-fields.tsx";

/** Spare empty rule rows offered below the existing ones (blank rows are ignored on save). */
const SPARE_RULES = 2;

export interface GroupPageProps {
  session: UiSession;
  group: GroupView;
  values: GroupFormValues;
  /** Problems by field name (see group-form.ts fieldErrors); "" holds those without a field. */
  errors?: Map<string, string[]>;
  notice?: string;
  /** The trace the page was asked for, answered. */
  trace?: TraceOutcome;
}

/** One group: every policy field as a form (read-only accounts see it disabled, without buttons), and the policy trace. */
export function GroupPage(props: GroupPageProps) {
  const { session, group, values, errors } = props;
  const canChange = session.principal.role === "admin";
  const rows = [...values.rules];
  // A refused form comes back with the spare rows it was sent: drop the empty ones at the end before adding fresh spares.
  while (rows.length > 0 && isBlankRule(rows.at(-1)!)) rows.pop();
  if (canChange) for (let i = 0; i < SPARE_RULES; i++) rows.push(blankRule());
  const tests = [...values.tests];
  while (tests.length > 0 && isBlankTest(tests.at(-1)!)) tests.pop();
  if (canChange) for (let i = 0; i < SPARE_RULES; i++) tests.push(blankTest());
  return (
    <Page title={`Group ${group.name}`} session={session} current="/ui/groups">
      <p>
        <a href="/ui/groups">All groups</a> · {`${group.members.length} member(s)`}
        {group.members.length > 0 && `: ${group.members.slice(0, 20).join(", ")}${group.members.length > 20 ? ", …" : ""}`}
      </p>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <RefusedSummary errors={errors} />
      <form method="post" action={`/ui/groups/${encodeURIComponent(group.name)}`} class="group-form">
        {canChange && <CsrfField session={session} />}
        <fieldset disabled={!canChange} class="plain">
          <Fieldset legend="Routes and DNS">
            <ListField name="routes" label="Routes (split include)" hint="one network per line, IPv4 or IPv6; none: all traffic" values={values} errors={errors} />
            <ListField name="excludeRoutes" label="Excluded routes" hint="one network per line" values={values} errors={errors} />
            <ListField name="dns" label="DNS servers" hint="up to 3, IPv4 or IPv6" values={values} errors={errors} />
            <ListField name="splitDns" label="Split-DNS domains" hint="resolved through the tunnel's DNS only; one per line" values={values} errors={errors} />
            <TextField name="defaultDomain" label="Default domain" values={values} errors={errors} />
          </Fieldset>
          <Fieldset legend="Tunnel and timeouts">
            <TextField name="mtu" label="MTU" hint="576-9000; blank: default" inputmode="numeric" values={values} errors={errors} />
            <TextField name="dpdSeconds" label="Dead-peer detection (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="keepaliveSeconds" label="Keepalive (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="mobileDpdSeconds" label="Mobile dead-peer detection (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="idleTimeoutSeconds" label="Idle timeout (s)" hint="0 or blank: never" inputmode="numeric" values={values} errors={errors} />
            <TextField name="sessionTimeoutSeconds" label="Session timeout (s)" hint="0 or blank: never" inputmode="numeric" values={values} errors={errors} />
          </Fieldset>
          <Fieldset legend="Login">
            <TextField name="auth" label="Login methods" hint="e.g. password, password+otp, saml|password" values={values} errors={errors} />
            <TextField name="maxSessionsPerUser" label="Sessions per user" hint="blank: no limit" inputmode="numeric" values={values} errors={errors} />
          </Fieldset>
          <fieldset class="panel">
            <legend>Firewall</legend>
            <div class="grid-form">
              <label for="f-rulesMode">
                Access rules
                <select id="f-rulesMode" name="rulesMode">
                  <option value="starter" selected={values.rulesMode === "starter"}>
                    starter rule: allow everything outbound
                  </option>
                  <option value="explicit" selected={values.rulesMode === "explicit"}>
                    the rules below (none: nothing allowed)
                  </option>
                </select>
              </label>
              <TextField name="rateUp" label="Upload limit per session" hint="e.g. 20mbit; blank: none" values={values} errors={errors} />
              <TextField name="rateDown" label="Download limit per session" hint="e.g. 100mbit; blank: none" values={values} errors={errors} />
              <label class="check">
                <input type="checkbox" name="restrictToRoutes" value="true" checked={values.restrictToRoutes} />
                Deny anything outside the routes
              </label>
              <label class="check">
                <input type="checkbox" name="icmpProhibited" value="true" checked={values.icmpProhibited} />
                Answer denied packets with ICMP "prohibited"
              </label>
            </div>
            <FieldErrors name="rules" errors={errors} />
            <RulesTable rows={rows} errors={errors} caption="Deny wins over allow; the first matching rule is named in traces. Rows left empty are ignored." />
            <FieldErrors name="tests" errors={errors} />
            <PolicyTestsTable rows={tests} errors={errors} />
          </fieldset>
          <QuotaFields values={values} errors={errors} whose="no quota from this group" />
        </fieldset>
        {canChange && <button type="submit">Save group</button>}
      </form>
      <TraceBox
        action={`/ui/groups/${encodeURIComponent(group.name)}`}
        outcome={props.trace}
        askUser
        intro="Which rule decides a member's packet, from the saved policy (and the user's own rules, when you name one), as the firewall compiles it: the answer of gw policy trace."
      />
      {canChange && (
        <section class="panel" aria-labelledby="delete-title">
          <h2 id="delete-title">Delete</h2>
          {group.members.length > 0 ? (
            <p class="muted">A group with members cannot be deleted: move its members to another group first.</p>
          ) : (
            <ActionButton session={session} action={`/ui/groups/${encodeURIComponent(group.name)}/delete`} label="Delete group" danger confirm={`Delete group ${group.name}?`} />
          )}
        </section>
      )}
    </Page>
  );
}
