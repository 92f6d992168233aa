/** @jsxImportSource hono/jsx */
import { quotaInput, type QuotaField } from "../quota-form.ts";
import { FieldErrors, fieldId, invalidAttrs, type FieldProblems } from "./field-errors.tsx";
import { Fieldset, TextField, type FormText } from "./policy-fields.tsx";

/** A select with a visible label, its value from the form's text and its problems after it. */
export function LabeledSelect(props: { name: string; label: string; options: readonly string[]; values: FormText; errors?: FieldProblems; hint?: string }) {
  const value = props.values.text[props.name] ?? "";
  return (
    <label for={fieldId(props.name)}>
      {props.label}
      {props.hint && <span class="muted hint">{props.hint}</span>}
      <select id={fieldId(props.name)} name={props.name} {...invalidAttrs(props.name, props.errors)}>
        {props.options.map((o) => (
          <option value={o} selected={o === value}>
            {o}
          </option>
        ))}
      </select>
      <FieldErrors name={props.name} errors={props.errors} />
    </label>
  );
}

/** The data quota's inputs (docs/usage.md); `whose` says what a blank amount means here. */
export function QuotaFields({ values, errors, whose }: { values: FormText; errors?: FieldProblems; whose: string }) {
  const n = (f: QuotaField) => quotaInput(f);
  return (
    <Fieldset legend="Data quota">
      <TextField name={n("bytes")} label="Amount" hint={`e.g. 50GB, 500MB, 10GiB; blank: ${whose}`} values={values} errors={errors} />
      <LabeledSelect name={n("period")} label="Period" hint="UTC" options={["monthly", "total"]} values={values} errors={errors} />
      <TextField name={n("resetDay")} label="Reset day" hint="monthly: day of the month, 1-31; blank: 1" inputmode="numeric" values={values} errors={errors} />
      <LabeledSelect name={n("count")} label="Counts" hint="rx: from the client, tx: to it" options={["both", "rx", "tx"]} values={values} errors={errors} />
      <LabeledSelect name={n("atLimit")} label="At the limit" hint="block ends sessions and refuses logins" options={["block", "throttle"]} values={values} errors={errors} />
      <TextField name={n("throttleRate")} label="Throttle rate" hint="throttle: e.g. 1mbit" values={values} errors={errors} />
    </Fieldset>
  );
}
