import { describe, expect, it } from "vitest";
import { DEFAULT_HEARTBEAT_FILE, readWorkerSettings } from "../../channels/core/worker-settings.js";
import { PROVIDERS } from "../../channels/providers.js";

describe("worker settings", () => {
  it("reads each provider's API root from the variable the provider names", () => {
    const settings = readWorkerSettings(PROVIDERS, {
      TWILIO_API_ROOT: "http://127.0.0.1:9001/",
      AT_API_ROOT: "https://at.staging.example.org",
      TELEGRAM_API_ROOT: " http://bot-api.internal:8081 ",
    });
    expect(settings.apiRoots).toEqual({
      twilio: "http://127.0.0.1:9001",
      africastalking: "https://at.staging.example.org",
      telegram: "http://bot-api.internal:8081",
    });
    expect(readWorkerSettings(PROVIDERS, {}).apiRoots).toEqual({});
  });

  it("names every bad value at once", () => {
    expect(() =>
      readWorkerSettings(PROVIDERS, {
        TWILIO_API_ROOT: "api.twilio.com",
        CHANNEL_JOB_LOCK_MS: "5",
        WORKER_HEARTBEAT_FILE: "alive",
      }),
    ).toThrow(
      /CHANNEL_JOB_LOCK_MS must be whole milliseconds[\s\S]*TWILIO_API_ROOT must be an http[\s\S]*WORKER_HEARTBEAT_FILE must be an absolute path/,
    );
    expect(readWorkerSettings(PROVIDERS, {}).heartbeatFile).toBe(DEFAULT_HEARTBEAT_FILE);
  });
});
