/** Slow password hashing (argon2id), behind an interface so each runtime can use its fastest implementation. */
export interface PasswordHasher {
  /** Returns a PHC string: $argon2id$v=19$m=...,t=...,p=...$salt$hash */
  hash(password: string): Promise<string>;
  verify(password: string, phc: string): Promise<boolean>;
}
