// `npm run staff -- add|disable|enable|password|list`: staff accounts of the console, kept where the service
// keeps them (Redis with REDIS_URL, else STAFF_FILE). Passwords are typed at a hidden prompt, or read from
// standard input when it is not a terminal; they never appear in arguments, the environment or logs.
import { createInterface } from "node:readline";
import { Redis } from "ioredis";
import { ConfigError, loadConfig, redisNamespaces } from "../config.js";
import { createStaffStore, ROLES, type Role, type StaffAccount, USERNAME } from "./accounts.js";
import { hashPassword, passwordProblem } from "./passwords.js";

const USAGE = `usage:
  npm run staff -- add <username> --role officer|admin [--name "Full Name"]
  npm run staff -- password <username>        set a new password (ends their sessions)
  npm run staff -- disable <username>         no more sign-in; their sessions end
  npm run staff -- enable <username>
  npm run staff -- list
The password is asked at a hidden prompt, or read from standard input (first line) when it is not a terminal.`;

class UsageError extends Error {}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith("--")) throw new UsageError(`${name} needs a value`);
  return value;
}

async function readPassword(prompt: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
  if (!process.stdin.isTTY) {
    for await (const line of rl) {
      rl.close();
      return line;
    }
    throw new UsageError("no password on standard input");
  }
  const muted = rl as unknown as { _writeToOutput: (s: string) => void; output: NodeJS.WritableStream };
  muted._writeToOutput = (s) => {
    if (s.startsWith(prompt)) muted.output.write(prompt);
  };
  const answer = await new Promise<string>((resolve) => rl.question(prompt, resolve));
  process.stderr.write("\n");
  rl.close();
  return answer;
}

async function newPassword(): Promise<string> {
  const password = await readPassword("Password: ");
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(problem);
  if (process.stdin.isTTY && (await readPassword("Again: ")) !== password)
    throw new UsageError("the two passwords differ");
  return password;
}

async function main(argv: string[]): Promise<number> {
  const [command, username, ...rest] = argv;
  const config = loadConfig();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: true }) : undefined;
  const store = createStaffStore(redis, { prefix: redisNamespaces(config).keys, file: config.staffFile });
  try {
    if (command === "list") {
      for (const a of (await store.list()).sort((x, y) => x.username.localeCompare(y.username)))
        console.log(`${a.username}\t${a.role}\t${a.disabled ? "disabled" : "active"}\t${a.name}`);
      return 0;
    }
    if (!command || !username) throw new UsageError("a command and a user name are needed");
    if (!USERNAME.test(username))
      throw new UsageError(
        "user names are 2-32 characters: a-z, 0-9, '.', '_' and '-', starting with a letter or digit",
      );
    const existing = await store.get(username);
    const save = async (account: StaffAccount, done: string) => {
      await store.put(account);
      console.log(done);
      return 0;
    };
    switch (command) {
      case "add": {
        if (existing) throw new UsageError(`${username} already exists (use password, enable or disable)`);
        const role = option(rest, "--role");
        if (!role || !(ROLES as readonly string[]).includes(role))
          throw new UsageError("--role officer|admin is needed");
        const passwordHash = await hashPassword(await newPassword());
        return save(
          {
            username,
            name: option(rest, "--name") ?? username,
            role: role as Role,
            passwordHash,
            disabled: false,
            createdAt: new Date().toISOString(),
            version: 1,
          },
          `added ${username} (${role})`,
        );
      }
      case "password":
      case "disable":
      case "enable": {
        if (!existing) throw new UsageError(`no account ${username}`);
        if (command === "password")
          return save(
            {
              ...existing,
              passwordHash: await hashPassword(await newPassword()),
              version: existing.version + 1,
            },
            `new password set for ${username}; their sessions have ended`,
          );
        const disabled = command === "disable";
        return save(
          { ...existing, disabled, version: existing.version + (disabled ? 1 : 0) },
          `${username} ${disabled ? "disabled; their sessions have ended" : "enabled"}`,
        );
      }
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } finally {
    await redis?.quit().catch(() => undefined);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`staff: ${error.message}\n${USAGE}`);
      process.exit(2);
    }
    console.error(`staff: ${error instanceof ConfigError ? error.message : (error as Error).message}`);
    process.exit(1);
  },
);
