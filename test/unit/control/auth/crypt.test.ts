import { describe, expect, test } from "bun:test";
import { cryptHash, isCryptHash, verifyCrypt } from "../../../../src/control/auth/crypt.ts";

/**
 * Vectors made on this machine: `openssl passwd -1/-5/-6 -salt S PW`, Python's crypt (glibc)
 * for rounds= and empty passwords, and Debian's `ocpasswd -c FILE -g staff,ops 'ä/b:c'`.
 */
const LONG = "pässwörd with spaces and a very long tail that exceeds sixty-four bytes of input for sure!!";
const VECTORS: [string, string][] = [
  ["PW", "$1$S$7WjOiJQZ9dM5FXm4hihTv."],
  ["", "$1$S$V6igyYXzAb/5/tj78GOcq1"],
  [LONG, "$1$S$KCUY6mv79jUoe50ujQKFF1"],
  ["PW", "$5$S$iqqqDlibl2BzfOY.Hi9yjjyQJTOvQ7zZZFCs1nnySRC"],
  ["", "$5$S$abVkiB3qH4ZFJIIRvDdJYewBzXifeUG4W9SfEj159x4"],
  [LONG, "$5$S$Cyj7voss3HETOtYTQUSINE3pVpZvY04IW2AuOtqSSbB"],
  ["PW", "$6$S$CH.Tlhu808mQDd2U8KdEhcn6RPUmKvFPPgR2H5yf9.5hKJlcAehZXMUO0Uv.0x1gWdsdDu7VEEjGIcpIjr3wh0"],
  ["", "$6$S$qVR8cbnlZEiA4xJluPQI5xqLSA50ZEJ8RYOP5cZ0/1YznVVthKF1tcl82y80VRs/cES9ZcwoEpg0hvDbJECcn0"],
  [LONG, "$6$S$Q4Ah6A9L6bF9lHdDE98IoxBFR0AjUMoRpeEbjFCOQVvzxlO76fygzTJcd1H3Zr1biu75LruWMa9PZLNyqlibC1"],
  ["x", "$6$saltstring_long_$3dkN9bvKpgHBajedbhGbLkIRY8raV9sU4Z53aEvw2BabtJ/FCUI5q/Itp0oX1xEcjxdJD.u95eVLtCk9P4ldN0"],
  ["Hello world!", "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"],
  ["Hello world!", "$6$rounds=1400$anotherlongsalts$5FGyu8c4BZDX4wJgs0Un26YOw2XibT5eTkHF1I1aP3QqStoJI9BHD2YPJYsAjEePVGUyBjdZxcNqMWlrrbIOC."],
  ["This is just a test", "$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"],
  ["Secr3t:pw", "$5$GYFVgAy8p4eDAr/O$GAkjMdrNWNGpr442207.kcV9uVfwGge9Slz.tnyDC17"],
];

describe("crypt(3) hashes from ocpasswd files", () => {
  test("each vector is reproduced exactly", () => {
    for (const [password, hash] of VECTORS) expect(cryptHash(password, hash)).toBe(hash);
  });

  test("the right password verifies; a wrong one, a locked entry and other forms do not", () => {
    for (const [password, hash] of VECTORS) {
      expect(verifyCrypt(password, hash)).toBe(true);
      expect(verifyCrypt(`${password}x`, hash)).toBe(false);
      expect(verifyCrypt(password, `!${hash}`)).toBe(false);
    }
    expect(verifyCrypt("PW", "$2b$10$abcdefghijklmnopqrstuv")).toBe(false);
    expect(verifyCrypt("PW", "$6$rounds=999999999$S$x")).toBe(false); // too costly to try
  });

  test("isCryptHash tells crypt hashes from argon2id PHC strings and locked entries", () => {
    expect(isCryptHash("$6$S$abc")).toBe(true);
    expect(isCryptHash("$1$S$abc")).toBe(true);
    expect(isCryptHash("$argon2id$v=19$m=19456,t=2,p=1$x$y")).toBe(false);
    expect(isCryptHash("!$6$S$abc")).toBe(false);
  });
});
