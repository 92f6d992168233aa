/** `?a=1&b=x` from the parameters that are set, or "" when none is. */
export function queryString(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
  const q = query.toString();
  return q ? `?${q}` : "";
}
