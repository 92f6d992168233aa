/** @jsxImportSource hono/jsx */
import type { Child } from "hono/jsx";
import { protocols } from "../../firewall/rule.ts";
import type { RuleRow } from "../group-form.ts";
import { FieldErrors, fieldId, invalidAttrs } from "./field-errors.tsx";

/** The inputs of a policy form (a group's, or a user's overrides): text by field name. */
export interface FormText {
  text: Record<string, string>;
}

export function TextField(props: { name: string; label: string; values: FormText; errors?: Map<string, string[]>; hint?: string; inputmode?: "numeric" }) {
  return (
    <label for={fieldId(props.name)}>
      {props.label}
      {props.hint && <span class="muted hint">{props.hint}</span>}
      <input id={fieldId(props.name)} name={props.name} value={props.values.text[props.name] ?? ""} inputmode={props.inputmode} autocomplete="off" {...invalidAttrs(props.name, props.errors)} />
      <FieldErrors name={props.name} errors={props.errors} />
    </label>
  );
}

export function ListField(props: { name: string; label: string; values: FormText; errors?: Map<string, string[]>; hint: string }) {
  return (
    <label for={fieldId(props.name)}>
      {props.label}
      <span class="muted hint">{props.hint}</span>
      <textarea id={fieldId(props.name)} name={props.name} rows={3} {...invalidAttrs(props.name, props.errors)}>
        {props.values.text[props.name] ?? ""}
      </textarea>
      <FieldErrors name={props.name} errors={props.errors} />
    </label>
  );
}

function Select(props: { name: string; label: string; value: string; options: readonly string[]; errors?: Map<string, string[]> }) {
  return (
    <label for={fieldId(props.name)}>
      <span class="sr-only">{props.label}</span>
      <select id={fieldId(props.name)} name={props.name} {...invalidAttrs(props.name, props.errors)}>
        {props.options.map((o) => (
          <option value={o} selected={o === props.value}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

function RuleRowInputs({ index, row, errors }: { index: number; row: RuleRow; errors?: Map<string, string[]> }) {
  const n = (f: string) => `rules.${index}.${f}`;
  const input = (f: "to" | "ports" | "description", label: string, placeholder: string) => (
    <label for={fieldId(n(f))}>
      <span class="sr-only">{`Rule ${index + 1} ${label}`}</span>
      <input id={fieldId(n(f))} name={n(f)} value={row[f]} placeholder={placeholder} autocomplete="off" {...invalidAttrs(n(f), errors)} />
      <FieldErrors name={n(f)} errors={errors} />
    </label>
  );
  return (
    <tr>
      <td class="num">{String(index + 1)}</td>
      <td>
        <Select name={n("action")} label={`Rule ${index + 1} action`} value={row.action} options={["allow", "deny"]} errors={errors} />
      </td>
      <td>
        <Select name={n("direction")} label={`Rule ${index + 1} direction`} value={row.direction} options={["outbound", "inbound"]} errors={errors} />
      </td>
      <td>{input("to", "address or network", "198.51.100.0/24")}</td>
      <td>
        <Select name={n("proto")} label={`Rule ${index + 1} protocol`} value={row.proto} options={protocols} errors={errors} />
      </td>
      <td>{input("ports", "ports", "443 or 8000-8080")}</td>
      <td>
        {input("description", "description", "")}
        <FieldErrors name={`rules.${index}`} errors={errors} />
      </td>
    </tr>
  );
}

export function Fieldset({ legend, children }: { legend: string; children?: Child }) {
  return (
    <fieldset class="panel">
      <legend>{legend}</legend>
      <div class="grid-form">{children}</div>
    </fieldset>
  );
}

/** Access rules as rows of inputs; problems beside the cell that caused them. */
export function RulesTable({ rows, errors, caption }: { rows: RuleRow[]; errors?: Map<string, string[]>; caption: string }) {
  return (
    <div class="scroll-x">
      <table class="rules">
        <caption class="muted">{caption}</caption>
        <thead>
          <tr>
            <th scope="col" class="num">#</th>
            <th scope="col">Action</th>
            <th scope="col">Direction</th>
            <th scope="col">Address or network</th>
            <th scope="col">Protocol</th>
            <th scope="col">Ports</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <RuleRowInputs index={index} row={row} errors={errors} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
