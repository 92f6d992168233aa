/** Cookie request header -> name/value map (first occurrence wins; malformed pairs ignored). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** Our cookies are always Secure and HttpOnly; an empty value with an old date deletes one. */
export function setCookie(name: string, value: string): string {
  return value === ""
    ? `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure; HttpOnly`
    : `${name}=${value}; Secure; HttpOnly`;
}
