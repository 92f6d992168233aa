/** @jsxImportSource hono/jsx */

/** Problems by form field name ("name", "rules.4.to"); "" holds those that belong to no field. */
export type FieldProblems = Map<string, string[]>;

export const fieldId = (name: string) => `f-${name.replace(/\./g, "-")}`;

/** The problems of one field, right after it; the input points at them with invalidAttrs(). */
export function FieldErrors({ name, errors }: { name: string; errors?: FieldProblems }) {
  const list = errors?.get(name);
  if (!list?.length) return null;
  return (
    <span class="field-error" id={`${fieldId(name)}-error`} role="alert">
      {list.join("; ")}
    </span>
  );
}

/** aria-invalid and aria-describedby for a field with problems (nothing otherwise). */
export function invalidAttrs(name: string, errors?: FieldProblems) {
  return errors?.get(name)?.length ? { "aria-invalid": "true", "aria-describedby": `${fieldId(name)}-error` } : {};
}

/** "Nothing was saved: 2 problem(s), shown next to the fields." plus those without a field. */
export function RefusedSummary({ errors }: { errors?: FieldProblems }) {
  if (!errors?.size) return null;
  const count = [...errors.values()].reduce((n, l) => n + l.length, 0);
  const general = errors.get("");
  return (
    <p class="notice error" role="alert">
      {`Nothing was saved: ${count} problem(s)${general?.length === count ? "" : ", shown next to the fields"}.`}
      {general?.length ? ` ${general.join("; ")}` : ""}
    </p>
  );
}
