/** JSON values an operator (or an attacker) might put in a field: plausible ones, edge cases and junk. */
import fc from "fast-check";

const plausibleStrings = [
  "",
  " ",
  "0.0.0.0",
  "::",
  "10.10.0.0/24",
  "10.10.0.50",
  "10.10.0.300",
  "10.0.0.1/8",
  "198.51.100.0/24",
  "203.0.113.7",
  "127.0.0.1:8443",
  "localhost:443",
  "[::1]:8443",
  "1.2.3.4:0",
  "gw0",
  "gw-with-a-very-long-name",
  "staff",
  "alice",
  "admin",
  "read",
  "password",
  "password+otp",
  "saml|password",
  "certificate+password",
  "otp+",
  "cn",
  "san-email",
  "example.com",
  "2030-01-01T00:00:00Z",
  "1970-01-01",
  "https://idp.example/sso",
  "http://",
  "/etc/gw/cert.pem",
  "../../etc/passwd",
  "\u0000",
  "a\nb",
  "__proto__",
  "constructor",
];

export const plausibleValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...plausibleStrings) },
  { weight: 2, arbitrary: fc.integer({ min: -10, max: 100000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1, 576, 9000, 65535, 65536, 1e308, -0, 0.5, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...plausibleStrings), { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

/** An object using (some of) the given keys, now and then with an unknown one. */
export function shapedObject(keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const unknownKeys = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("__proto__", "constructor", "toString")), plausibleValue, {
    minKeys: 1,
    maxKeys: 2,
  });
  return fc
    .tuple(
      keys.length ? fc.dictionary(fc.constantFrom(...keys), plausibleValue, { maxKeys: keys.length }) : fc.constant({}),
      fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: unknownKeys }),
    )
    .map(([known, extra]) => ({ ...extra, ...known }));
}
