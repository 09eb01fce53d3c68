import { hash, verify } from "@node-rs/argon2";
import { PASSWORD_MIN_LENGTH } from "../limits.js";

// Argon2id with the library's defaults (19 MiB, 2 passes, 1 lane): OWASP's recommended minimum.
export const hashPassword = (password: string): Promise<string> => hash(password);

// A user name that does not exist is checked against this, so the answer takes as long either way.
const NOBODY = hash("no such account: equalises the time a failed sign-in takes");

export async function checkPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  const stored = passwordHash ?? (await NOBODY);
  const matches = await verify(stored, password).catch(() => false);
  return matches && passwordHash !== undefined;
}

/** Why a new password is refused, or undefined when it will do. */
export function passwordProblem(password: string): string | undefined {
  if ([...password].length < PASSWORD_MIN_LENGTH)
    return `the password must have at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > 256) return "the password must have at most 256 characters";
  return undefined;
}
