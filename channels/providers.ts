// The providers this service talks to. The channel core works from this list and names none of them.
import { africasTalkingProvider } from "./africastalking/index.js";
import type { ChannelProvider } from "./core/provider.js";
import { telegramProvider } from "./telegram/index.js";
import { twilioProvider } from "./twilio/index.js";

export const PROVIDERS: readonly ChannelProvider[] = [
  twilioProvider,
  telegramProvider,
  africasTalkingProvider,
];
