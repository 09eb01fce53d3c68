import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  return [];
}

describe("HOST", () => {
  it("defaults to every interface, and takes IPv4, IPv6 and host names", () => {
    expect(loadConfig({}).host).toBe("0.0.0.0");
    expect(loadConfig({ HOST: "  " }).host).toBe("0.0.0.0");
    for (const host of [
      "127.0.0.1",
      "0.0.0.0",
      "::",
      "::1",
      "fe80::1",
      "localhost",
      "api-1.internal.example",
    ]) {
      expect(loadConfig({ HOST: host }).host, host).toBe(host);
    }
  });

  it("refuses a URL, a port, a mistyped address or a name with spaces, with one clear line", () => {
    for (const host of ["http://0.0.0.0", "0.0.0.0:8000", "999.1.1.1", "my host", "-api", "api_1", "[::1]"]) {
      expect(problemsOf({ HOST: host }), host).toEqual([
        `HOST must be an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name, without scheme or port (got "${host}")`,
      ]);
    }
  });

  it("is reported together with the other bad variables", () => {
    const problems = problemsOf({ HOST: "0.0.0.0:80", PORT: "eighty" });
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).toMatch(/^PORT must be .*\nHOST must be/);
  });
});

describe("API_KEYS", () => {
  const hash = (c: string) => c.repeat(64);
  it("refuses a name or a key given twice: a partner reads back the results made under its name", () => {
    expect(problemsOf({ API_KEYS: `a:${hash("1")}:10,b:${hash("2")}:10` })).toEqual([]);
    expect(problemsOf({ API_KEYS: `a:${hash("1")}:10,a:${hash("2")}:10` })).toEqual([
      'API_KEYS names "a" twice: each partner needs a name of its own',
    ]);
    expect(problemsOf({ API_KEYS: `a:${hash("1")}:10,b:${hash("1")}:10` })).toEqual([
      'API_KEYS gives "b" the same key as another entry: each partner needs a key of its own',
    ]);
  });
});

describe("TWILIO_WHATSAPP_NOTICE_SID", () => {
  const twilio = {
    TWILIO_ACCOUNT_SID: "AC1",
    TWILIO_AUTH_TOKEN: "token",
    PUBLIC_BASE_URL: "https://x.example",
    REDIS_URL: "redis://r",
  };
  const sid = (digit: string) => `HX${digit.repeat(32)}`;
  it("takes one Content SID, or one per language with a bare one for the others", () => {
    expect(
      loadConfig({ ...twilio, TWILIO_WHATSAPP_NOTICE_SID: sid("a") }).twilio?.whatsappNoticeSids,
    ).toEqual({
      "*": sid("a"),
    });
    const both = `sw:${sid("b")}, en:${sid("c")},${sid("a")}`;
    expect(loadConfig({ ...twilio, TWILIO_WHATSAPP_NOTICE_SID: both }).twilio?.whatsappNoticeSids).toEqual({
      "*": sid("a"),
      sw: sid("b"),
      en: sid("c"),
    });
    expect(loadConfig(twilio).twilio?.whatsappNoticeSids).toEqual({});
  });

  it("refuses a template's name, a message SID or an unknown language, one clear line each", () => {
    expect(
      problemsOf({
        ...twilio,
        TWILIO_WHATSAPP_NOTICE_SID: `crop_answer_waiting,xx:${sid("a")},sw:SM${"0".repeat(32)}`,
      }),
    ).toEqual([
      'TWILIO_WHATSAPP_NOTICE_SID must hold Content SIDs: HX and 32 hexadecimal digits (got "crop_answer_waiting")',
      'TWILIO_WHATSAPP_NOTICE_SID names language "xx": one of en, fr, sw, es, pt, it',
      `TWILIO_WHATSAPP_NOTICE_SID must hold Content SIDs: HX and 32 hexadecimal digits (got "SM${"0".repeat(32)}")`,
    ]);
  });
});
