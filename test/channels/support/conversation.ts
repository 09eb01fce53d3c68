// Farmers talking to the service as each provider delivers them: real webhook payloads with the providers'
// own authentication (Twilio's signature, Telegram's secret header, Africa's Talking's path token), and a
// record of everything each farmer sent and received (from the providers' stand-ins), in order.
import { inboundJobId } from "../../../channels/core/queue.js";
import type { Language } from "../../../src/diagnosis/types.js";
import { type Harness, TEST_CONFIG } from "./harness.js";
import type { Recorded } from "./providers.js";
import { until } from "./wait.js";
import { postTelegram, postTwilio } from "./webhooks.js";

/** One line of a conversation, as the transcript shows it. */
export type Turn =
  | { who: "farmer"; at: number; text?: string; photo?: string; button?: string }
  | { who: "service"; at: number; text: string; buttons?: string[][]; language: Language }
  | { who: "typing"; at: number }
  | { who: "ussd"; at: number; input: string; screen: string; end: boolean; language: Language };

export interface Conversation {
  title: string;
  /** What the reader should know about this farmer (phone country, app language). */
  about: string;
  turns(): Turn[];
}

type Send = { at: number; text: string; buttons?: string[][] };

/** What each farmer helper shares: the language the next replies are in, and its record. */
abstract class Farmer implements Conversation {
  protected readonly sent: Turn[] = [];
  private readonly languages: { at: number; language: Language }[] = [];

  constructor(
    protected readonly h: Harness,
    readonly title: string,
    readonly about: string,
    language: Language,
  ) {
    this.expect(language);
  }

  /** From now on, replies are expected in `language` (the farmer changed it, or is about to). */
  expect(language: Language) {
    this.languages.push({ at: Date.now(), language });
  }

  /** The language replies are expected in now: a USSD screen is the answer to the input just typed. */
  protected current(): Language {
    return this.languages.at(-1)!.language;
  }

  private languageAt(at: number): Language {
    // A change applies to replies after it: expect() follows the reply it was waiting for, which the stand-in
    // may have stamped in the same millisecond.
    return this.languages.filter((l, i) => i === 0 || l.at < at).at(-1)!.language;
  }

  /** Every message the provider's stand-in took for this farmer's number or chat. */
  protected abstract all(): Send[];

  /** What this conversation received: what the same number got in an earlier one is that one's. */
  protected received(): Send[] {
    const since = this.languages[0]!.at;
    return this.all().filter((r) => r.at >= since);
  }
  protected typing(): number[] {
    return [];
  }

  /** Replies received so far (typing not counted). */
  replies(): Send[] {
    return this.received();
  }

  /** Waits for the first reply since the farmer's latest message that matches, and returns it. */
  async reply(matching: RegExp, timeoutMs = 60_000): Promise<Send> {
    const since = this.sent.at(-1)?.at ?? 0;
    const find = () => this.received().find((r) => r.at >= since && matching.test(r.text));
    await until(() => find() !== undefined, `${this.title}: a reply matching ${matching}`, timeoutMs);
    return find()!;
  }

  turns(): Turn[] {
    // What the same number got in an earlier conversation is that one's.
    const since = this.languages[0]!.at;
    const service: Turn[] = this.received()
      .filter((r) => r.at >= since)
      .map((r) => ({
        who: "service",
        at: r.at,
        text: r.text,
        ...(r.buttons ? { buttons: r.buttons } : {}),
        language: this.languageAt(r.at),
      }));
    const typing: Turn[] = this.typing()
      .filter((at) => at >= since)
      .map((at) => ({ who: "typing", at }));
    return [...this.sent, ...service, ...typing].sort((a, b) => a.at - b.at);
  }
}

type Keyboard = { inline_keyboard: { text: string; callback_data: string }[][] };

export class TelegramFarmer extends Farmer {
  private static updates = 300_000;

  constructor(
    h: Harness,
    title: string,
    about: string,
    private readonly chat: number,
    private readonly languageCode: string,
    language: Language,
  ) {
    super(h, title, about, language);
  }

  private mine = (r: Recorded) => r.body.chat_id === String(this.chat) && r.failedWith === undefined;

  /** The queue's job for this farmer's latest update. */
  lastJobId(): string {
    return inboundJobId({ provider: "telegram", messageId: String(TelegramFarmer.updates) });
  }

  protected all(): Send[] {
    return this.h.standIn
      .sends("telegram")
      .filter(this.mine)
      .map((r) => {
        const keyboard = r.body.reply_markup as Keyboard | undefined;
        return {
          at: r.at,
          text: String(r.body.text),
          ...(keyboard ? { buttons: keyboard.inline_keyboard.map((row) => row.map((b) => b.text)) } : {}),
        };
      });
  }

  protected override typing(): number[] {
    return this.h.standIn.requests
      .filter((r) => r.path.endsWith("/sendChatAction") && this.mine(r))
      .map((r) => r.at);
  }

  private async post(update: object) {
    const res = await postTelegram(this.h.app, { update_id: ++TelegramFarmer.updates, ...update });
    if (res.statusCode !== 200) throw new Error(`telegram webhook answered ${res.statusCode}`);
  }

  private message(fields: object) {
    const from = { id: this.chat, is_bot: false, first_name: this.title, language_code: this.languageCode };
    return {
      message: {
        message_id: TelegramFarmer.updates,
        from,
        chat: { id: this.chat, first_name: this.title, type: "private" },
        date: Math.floor(Date.now() / 1000),
        ...fields,
      },
    };
  }

  async text(text: string) {
    this.sent.push({ who: "farmer", at: Date.now(), text });
    await this.post(this.message({ text }));
  }

  /** A photo as Telegram sends it: its sizes, the largest last; `fileId` is served by the stand-in. */
  async photo(fileId: string, shows: string, caption?: string) {
    this.sent.push({ who: "farmer", at: Date.now(), photo: shows, ...(caption ? { text: caption } : {}) });
    const size = this.h.standIn.media.get(fileId)?.length ?? 0;
    await this.post(
      this.message({
        photo: [
          {
            file_id: `${fileId}-thumb`,
            file_unique_id: `${fileId}-t`,
            file_size: 1_200,
            width: 90,
            height: 90,
          },
          { file_id: fileId, file_unique_id: fileId, file_size: size, width: 640, height: 640 },
        ],
        ...(caption ? { caption } : {}),
      }),
    );
  }

  /** Presses the button labelled `label` under the latest reply that has it. */
  async press(label: string) {
    const reply = this.h.standIn
      .sends("telegram")
      .filter(this.mine)
      .reverse()
      .find((r) =>
        (r.body.reply_markup as Keyboard | undefined)?.inline_keyboard.flat().some((b) => b.text === label),
      );
    if (!reply) throw new Error(`${this.title}: no reply with a [${label}] button`);
    const button = (reply.body.reply_markup as Keyboard).inline_keyboard
      .flat()
      .find((b) => b.text === label)!;
    this.sent.push({ who: "farmer", at: Date.now(), button: label });
    await this.post({
      callback_query: {
        id: `cb-${TelegramFarmer.updates}`,
        from: { id: this.chat, is_bot: false, first_name: this.title, language_code: this.languageCode },
        message: { message_id: 1, chat: { id: this.chat, type: "private" }, date: 0, text: "..." },
        chat_instance: "-1",
        data: button.callback_data,
      },
    });
  }
}

/** A farmer on WhatsApp (`whatsapp`) or SMS/MMS through Twilio. */
export class TwilioFarmer extends Farmer {
  private static sids = 0;

  constructor(
    h: Harness,
    title: string,
    about: string,
    readonly phone: string,
    private readonly whatsapp: boolean,
    language: Language,
  ) {
    super(h, title, about, language);
  }

  private get ours() {
    return this.whatsapp ? TEST_CONFIG.twilio.whatsappFrom : TEST_CONFIG.twilio.smsFrom;
  }

  protected all(): Send[] {
    const to = this.whatsapp ? `whatsapp:${this.phone}` : this.phone;
    return this.h.standIn
      .sends("twilio")
      .filter((r) => r.body.To === to && r.failedWith === undefined)
      .map((r) => ({ at: r.at, text: String(r.body.Body) }));
  }

  private lastSid = "";

  /** The queue's job for this farmer's latest message. */
  lastJobId(): string {
    return inboundJobId({ provider: "twilio", messageId: this.lastSid });
  }

  private async post(fields: Record<string, string>) {
    const prefix = this.whatsapp ? "whatsapp:" : "";
    const sid = `${fields.NumMedia === "1" ? "MM" : "SM"}${String(++TwilioFarmer.sids).padStart(32, "c")}`;
    this.lastSid = sid;
    const form: Record<string, string> = {
      MessageSid: sid,
      SmsMessageSid: sid,
      AccountSid: TEST_CONFIG.twilio.accountSid,
      From: `${prefix}${this.phone}`,
      To: `${prefix}${this.ours}`,
      Body: "",
      NumMedia: "0",
      NumSegments: "1",
      ApiVersion: "2010-04-01",
      ...(this.whatsapp ? { ProfileName: this.title, WaId: this.phone.slice(1) } : {}),
      ...fields,
    };
    const res = await postTwilio(this.h.app, form);
    if (res.statusCode !== 200) throw new Error(`twilio webhook answered ${res.statusCode}`);
  }

  async text(text: string) {
    this.sent.push({ who: "farmer", at: Date.now(), text });
    await this.post({ Body: text });
  }

  /** A photo as Twilio posts it: a media URL on its API host (here the stand-in, TWILIO_API_ROOT). */
  async photo(name: string, shows: string, caption?: string) {
    this.sent.push({ who: "farmer", at: Date.now(), photo: shows, ...(caption ? { text: caption } : {}) });
    await this.post({
      Body: caption ?? "",
      NumMedia: "1",
      MediaContentType0: "image/jpeg",
      MediaUrl0: `${this.h.standIn.baseUrl}/2010-04-01/Accounts/${TEST_CONFIG.twilio.accountSid}/Messages/MM0/Media/${name}`,
    });
  }
}

/** A farmer on Africa's Talking: SMS to the short code, and USSD sessions. */
export class AfricasTalkingFarmer extends Farmer {
  private static ids = 0;
  private static sessions = 0;
  private readonly base = `/channels/africastalking/${TEST_CONFIG.africasTalking.webhookToken}`;

  constructor(
    h: Harness,
    title: string,
    about: string,
    readonly phone: string,
    language: Language,
  ) {
    super(h, title, about, language);
  }

  protected all(): Send[] {
    return this.h.standIn
      .sends("africastalking")
      .filter((r) => r.body.to === this.phone && r.failedWith === undefined)
      .map((r) => ({ at: r.at, text: String(r.body.message) }));
  }

  private form(path: string, fields: Record<string, string>) {
    return this.h.app.inject({
      method: "POST",
      url: `${this.base}/${path}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams(fields).toString(),
    });
  }

  async sms(text: string) {
    this.sent.push({ who: "farmer", at: Date.now(), text });
    const id = `ATXid_conv_${++AfricasTalkingFarmer.ids}`;
    const res = await this.form("sms", {
      from: this.phone,
      to: "21525",
      text,
      date: new Date().toISOString().slice(0, 19).replace("T", " "),
      id,
      linkId: `link-${id}`,
      networkCode: "63902",
    });
    if (res.statusCode !== 200) throw new Error(`sms callback answered ${res.statusCode}`);
  }

  /**
   * One USSD session: dials the service code, then types each input in turn (Africa's Talking sends every
   * input so far, joined by "*"). Returns the screens shown. `switches` says that from the screen after
   * input `after` (1-based) on, screens are in another language (the caller chose it in this session).
   */
  async ussd(
    inputs: string[],
    switches?: { after: number; language: Language },
  ): Promise<{ end: boolean; text: string }[]> {
    const sessionId = `ATUid_conv_${++AfricasTalkingFarmer.sessions}`;
    const screens: { end: boolean; text: string }[] = [];
    for (let i = 0; i <= inputs.length; i++) {
      const res = await this.form("ussd", {
        sessionId,
        serviceCode: "*384*1234#",
        phoneNumber: this.phone,
        networkCode: "63902",
        text: inputs.slice(0, i).join("*"),
      });
      if (res.statusCode !== 200) throw new Error(`ussd callback answered ${res.statusCode}`);
      const end = res.body.startsWith("END ");
      const screen = { end, text: res.body.slice(4) };
      screens.push(screen);
      if (switches?.after === i) this.expect(switches.language);
      const at = Date.now();
      this.sent.push({
        who: "ussd",
        at,
        input: i === 0 ? "*384*1234#" : inputs[i - 1]!,
        screen: screen.text,
        end,
        language: this.current(),
      });
      if (end) break;
    }
    return screens;
  }
}
