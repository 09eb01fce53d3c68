import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Redis } from "ioredis";

export const ROLES = ["officer", "admin"] as const;
export type Role = (typeof ROLES)[number];

export interface StaffAccount {
  /** Lower-case sign-in name. */
  username: string;
  /** How the console names them (the review log shows it). */
  name: string;
  role: Role;
  /** Argon2id PHC string: the password itself is never stored. */
  passwordHash: string;
  disabled: boolean;
  createdAt: string;
  /** Bumped on every password change and disabling: sessions made before it end. */
  version: number;
}

export interface StaffStore {
  get(username: string): Promise<StaffAccount | undefined>;
  put(account: StaffAccount): Promise<void>;
  list(): Promise<StaffAccount[]>;
}

export const USERNAME = /^[a-z0-9][a-z0-9._-]{1,31}$/;

/** Accounts in Redis when the service has one (every instance sees them), else in a JSON file (mode 0600). */
export function createStaffStore(
  redis: Redis | undefined,
  options: { prefix?: string; file: string },
): StaffStore {
  return redis ? redisStaff(redis, `${options.prefix ?? "cd:"}staff`) : fileStaff(options.file);
}

function redisStaff(redis: Redis, key: string): StaffStore {
  return {
    async get(username) {
      const raw = await redis.hget(key, username);
      return raw ? (JSON.parse(raw) as StaffAccount) : undefined;
    },
    async put(account) {
      await redis.hset(key, account.username, JSON.stringify(account));
    },
    async list() {
      return Object.values(await redis.hgetall(key)).map((raw) => JSON.parse(raw) as StaffAccount);
    },
  };
}

// Read on every look-up, so `npm run staff` changes reach a running server without a restart.
function fileStaff(file: string): StaffStore {
  async function load(): Promise<Record<string, StaffAccount>> {
    if (!existsSync(file)) return {};
    return JSON.parse(await readFile(file, "utf8")) as Record<string, StaffAccount>;
  }
  return {
    get: async (username) => (await load())[username],
    async put(account) {
      const all = await load();
      all[account.username] = account;
      await mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(all, null, 2), { mode: 0o600 });
      await rename(temporary, file);
      await chmod(file, 0o600);
    },
    list: async () => Object.values(await load()),
  };
}
