/** @jsxImportSource hono/jsx */
import { protocols } from "../../firewall/rule.ts";
import type { TestRow } from "../policy-tests-form.ts";
import { FieldErrors, fieldId, invalidAttrs, type FieldProblems } from "./field-errors.tsx";

function TestSelect({ name, label, value, options, errors }: { name: string; label: string; value: string; options: readonly string[]; errors?: FieldProblems }) {
  return (
    <label for={fieldId(name)}>
      <span class="sr-only">{label}</span>
      <select id={fieldId(name)} name={name} {...invalidAttrs(name, errors)}>
        {options.map((o) => (
          <option value={o} selected={o === value}>
            {o}
          </option>
        ))}
      </select>
      <FieldErrors name={name} errors={errors} />
    </label>
  );
}

function TestRowInputs({ index, row, errors }: { index: number; row: TestRow; errors?: FieldProblems }) {
  const n = (f: keyof TestRow) => `tests.${index}.${f}`;
  const input = (f: "user" | "to" | "port", label: string, placeholder: string) => (
    <label for={fieldId(n(f))}>
      <span class="sr-only">{`Test ${index + 1} ${label}`}</span>
      <input id={fieldId(n(f))} name={n(f)} value={row[f]} placeholder={placeholder} autocomplete="off" inputmode={f === "port" ? "numeric" : undefined} {...invalidAttrs(n(f), errors)} />
      <FieldErrors name={n(f)} errors={errors} />
    </label>
  );
  return (
    <tr>
      <td class="num">{String(index + 1)}</td>
      <td>{input("user", "user", "any member")}</td>
      <td>{input("to", "address", "198.51.100.10")}</td>
      <td>
        <TestSelect name={n("proto")} label={`Test ${index + 1} protocol`} value={row.proto} options={protocols} errors={errors} />
      </td>
      <td>{input("port", "port", "22")}</td>
      <td>
        <TestSelect name={n("expect")} label={`Test ${index + 1} expected outcome`} value={row.expect} options={["allow", "deny"]} errors={errors} />
        {/* A failing assertion (policy_test_failed at "tests.N"): beside the row that states it. */}
        <FieldErrors name={`tests.${index}`} errors={errors} />
      </td>
    </tr>
  );
}

/** The policy's assertions as rows of inputs: every change of the group runs them, and a failing one refuses it. */
export function PolicyTestsTable({ rows, errors }: { rows: TestRow[]; errors?: FieldProblems }) {
  return (
    <div class="scroll-x">
      <table class="rules">
        <caption class="muted">Policy tests: each change of the rules runs them, and one that fails refuses the change. Rows left empty are ignored.</caption>
        <thead>
          <tr>
            <th scope="col" class="num">#</th>
            <th scope="col">User</th>
            <th scope="col">Address</th>
            <th scope="col">Protocol</th>
            <th scope="col">Port</th>
            <th scope="col">Expect</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <TestRowInputs index={index} row={row} errors={errors} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
