// Conversations as farmers have them, one per channel and language path of issue 13: real webhook payloads
// with the providers' own authentication, the real worker with the real model and knowledge base, and the
// providers' APIs on a loopback stand-in that records every message a farmer receives. Every line a farmer
// reads is checked to be in their language (support/language-oracle.ts), no reply states a percentage,
// every photo gets a sign of life within the channel's limit, replies keep their order, and every USSD
// screen fits whole with its code.
//
// `npm run transcripts` runs this file and writes what the farmers saw to docs/conversations/.
import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ussdFits } from "../../channels/core/render/ussd.js";
import { RECEIVED_NOTICE_AFTER_MS } from "../../channels/limits.js";
import { gsm7Letters } from "../../src/text/sms-segments.js";
import { HAVE_DATASETS } from "../diagnosis/helpers.js";
import {
  AfricasTalkingFarmer,
  type Conversation,
  TelegramFarmer,
  TwilioFarmer,
} from "./support/conversation.js";
import { loadCore } from "./support/core.js";
import { type Harness, startHarness } from "./support/harness.js";
import { foreignWords } from "./support/language-oracle.js";
import { diagnosedPhoto, notPlantPhoto, unsurePhoto } from "./support/photos.js";
import { TRANSCRIPTS_DIR, transcriptMarkdown, writeTranscript } from "./support/transcript.js";

/** A photo gets its answer, "typing" or "photo received" within this (the notice's delay, plus a loaded CI box). */
const FIRST_SIGN_WITHIN_MS = RECEIVED_NOTICE_AFTER_MS + 2_000;

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
const conversations = new Map<string, Conversation[]>();
const codeIn = (text: string) => /\b(?=[A-Z2-9]*[2-9])[A-Z2-9]{6}\b/.exec(text)?.[0];

function checkConversation(conversation: Conversation) {
  const turns = conversation.turns();
  for (const turn of turns) {
    if (turn.who !== "service" && turn.who !== "ussd") continue;
    const text = turn.who === "service" ? turn.text : turn.screen;
    expect(text, "no reply states a percentage").not.toMatch(/%/);
    for (const line of text.split("\n"))
      expect(foreignWords(line, turn.language), `${conversation.title} (${turn.language}): ${line}`).toEqual(
        [],
      );
    if (turn.who === "ussd") {
      expect(ussdFits(turn.screen), turn.screen).toBe(true);
      expect(turn.screen, "nothing cut").not.toContain("...");
    }
  }
  // Every photo: an answer, "typing" or "photo received" within the limit.
  turns.forEach((turn, i) => {
    if (turn.who !== "farmer" || !turn.photo) return;
    const sign = turns.slice(i + 1).find((t) => t.who === "service" || t.who === "typing");
    expect(sign, `${conversation.title}: a sign of life after the photo`).toBeDefined();
    expect(sign!.at - turn.at).toBeLessThanOrEqual(FIRST_SIGN_WITHIN_MS);
  });
}

function record(channel: string, conversation: Conversation) {
  conversations.set(channel, [...(conversations.get(channel) ?? []), conversation]);
}

beforeAll(async () => {
  if (!HAVE_DATASETS) return;
  core = await loadCore();
  // As the worker runs in production: with the expert loop's "did this help?" and photo notice.
  h = await startHarness({
    name: "conversations",
    diagnoser: core.diagnoser,
    knowledge: core.knowledge,
    expertLoop: true,
  });
  h.startWorker();
  const [lateBlight, rust, unsure, fish] = [
    await diagnosedPhoto(core.diagnoser, "tomato__late_blight"),
    await diagnosedPhoto(core.diagnoser, "maize__common_rust"),
    await unsurePhoto(core.diagnoser),
    await notPlantPhoto(core.diagnoser),
  ];
  for (const name of ["late-blight", "late-blight-held", "late-blight-flaky"])
    h.standIn.media.set(name, lateBlight);
  h.standIn.media.set("rust", rust);
  h.standIn.media.set("unsure", unsure);
  h.standIn.media.set("fish", fish);
}, 180_000);

afterAll(async () => {
  if (process.env.WRITE_TRANSCRIPTS && conversations.size > 0) await writeTranscripts();
  await h?.close();
  await core?.diagnoser.close();
});

// In CI the datasets are there: a missing one fails the suite instead of skipping it.
describe.skipIf(!HAVE_DATASETS && !process.env.CI)("conversations", () => {
  const photos = {
    lateBlight: "a tomato leaf with late blight (PlantVillage)",
    rust: "a maize leaf with common rust (PlantVillage)",
    unsure: "a field photo the model is unsure about (PlantDoc)",
    fish: "a fish (ImageNet): no plant",
  };
  let lateBlightCode: string;
  let awaCode: string;
  let rustCode: string;
  let wanjiru: TwilioFarmer;

  it("Telegram: French, then Swahili with a button; English, then Spanish with a caption", async () => {
    const amina = new TelegramFarmer(
      h,
      "Amina, Telegram set to French",
      "Telegram tells us her app is in French.",
      910_001,
      "fr",
      "fr",
    );
    await amina.text("/start");
    const welcome = await amina.reply(/^Bonjour ! Je suis le docteur des cultures\. Envoyez-moi une photo/);
    expect(welcome.buttons?.flat()).toEqual([
      "English",
      "Français",
      "Kiswahili",
      "Español",
      "Português",
      "Italiano",
    ]);

    await amina.photo("late-blight", photos.lateBlight, "mes tomates ont des taches brunes");
    const answer = await amina.reply(/^<b>Mildiou de la tomate \(très probable\)\.<\/b>/);
    expect(answer.buttons?.flat()).toContain("Kiswahili");
    lateBlightCode = codeIn(answer.text)!;
    expect(amina.turns().some((t) => t.who === "typing")).toBe(true);

    // The expert loop asks whether it helped (in French) before she switches to Swahili.
    await amina.reply(/^Cela vous a-t-il aidé \?/);
    amina.expect("sw");
    await amina.press("Kiswahili");
    const again = await amina.reply(
      new RegExp(`^<b>${core.knowledge.name("tomato__late_blight", "sw")} \\(uwezekano mkubwa\\)\\.</b>`),
    );
    expect(again.text).toContain(lateBlightCode);

    await amina.photo("unsure", photos.unsure);
    const unsure = await amina.reply(/^Huenda ni: .+, lakini hatuna uhakika\. Kwa jibu la uhakika zaidi/);
    expect(unsure.buttons).toBeDefined();

    await amina.photo("fish", photos.fish);
    const fish = await amina.reply(/^Hii haionekani kuwa mmea\./);
    expect(fish.text).toBe("Hii haionekani kuwa mmea. Tafadhali tuma picha ya karibu ya jani moja.");
    expect(fish.buttons).toBeUndefined();
    checkConversation(amina);
    record("telegram", amina);

    const john = new TelegramFarmer(
      h,
      "John, Telegram set to English",
      "His app is in English; he captions his photo with the word “Español”.",
      910_002,
      "en",
      "es",
    );
    await john.photo("rust", photos.rust, "Español");
    const rust = await john.reply(/^<b>Roya común del maíz \(muy probable\)\.<\/b>/);
    rustCode = codeIn(rust.text)!;
    await john.text("/start");
    await john.reply(/^¡Hola! Soy el doctor de cultivos\./);
    checkConversation(john);
    record("telegram", john);
  }, 120_000);

  it("WhatsApp: 'photo received' when the answer is slow (French); order kept across a failed download (Swahili)", async () => {
    const awa = new TwilioFarmer(
      h,
      "Awa, WhatsApp from Côte d'Ivoire",
      "Her number is Ivorian (+225): French on first contact. Her photo takes long to fetch.",
      "+2250707000101",
      true,
      "fr",
    );
    const release = h.standIn.holdMedia("late-blight-held");
    const caption = "les feuilles ont des anneaux bruns, apparus après la pluie";
    await awa.photo("late-blight-held", photos.lateBlight, caption);
    const notice = await awa.reply(/^Photo reçue/, RECEIVED_NOTICE_AFTER_MS + 10_000);
    expect(notice.text).toBe("Photo reçue. Nous l'examinons : la réponse arrive dans un instant.");
    expect(awa.replies()[0]).toEqual(notice);
    release();
    const answer = await awa.reply(/^\*Mildiou de la tomate \(très probable\)\.\*\nAgissez/);
    awaCode = codeIn(answer.text)!;
    expect((await h.store.getByCode(awaCode))?.note).toBe(caption);
    // The expert loop's photo notice closes her first turn.
    await awa.reply(/^Vos photos sont gardées 30 jours\./);
    await awa.text("aide");
    await awa.reply(/^Envoyez une photo nette d'une feuille malade/);
    checkConversation(awa);
    record("whatsapp", awa);

    wanjiru = new TwilioFarmer(
      h,
      "Wanjiru, WhatsApp from Kenya",
      "Her number is Kenyan (+254): Swahili on first contact. Twilio's media server fails on the first try; she asks for help right after her photo.",
      "+254712000301",
      true,
      "sw",
    );
    h.standIn.failMedia("late-blight-flaky", 1, 503);
    await wanjiru.photo("late-blight-flaky", photos.lateBlight);
    await wanjiru.text("msaada");
    const help = await wanjiru.reply(/^Tuma picha safi ya jani moja lenye ugonjwa/);
    // Told first that the photo arrived, then its answer, then the answer to her later "msaada".
    const replies = wanjiru.replies().map((r) => r.text);
    const delayed = replies.indexOf(
      "Picha imepokelewa, lakini hatuwezi kuiangalia sasa hivi. Tutakutumia jibu mara tutakapoweza.",
    );
    const diagnosis = replies.findIndex((r) =>
      r.startsWith(`*${core.knowledge.name("tomato__late_blight", "sw")} (uwezekano mkubwa).*`),
    );
    expect(delayed).toBe(0);
    expect(diagnosis).toBeGreaterThan(delayed);
    expect(replies.indexOf(help.text)).toBeGreaterThan(diagnosis);
    // A later photo that is no plant does not replace her last diagnosis (USSD, below).
    await wanjiru.photo("fish", photos.fish);
    await wanjiru.reply(/^Hii haionekani kuwa mmea\. Tafadhali tuma picha ya karibu ya jani moja\.$/);
    checkConversation(wanjiru);
    record("whatsapp", wanjiru);
  }, 120_000);

  it("MMS and SMS through Twilio: a photo answered in three segments, its code for the treatment (Spanish, Italian)", async () => {
    const maria = new TwilioFarmer(
      h,
      "María, MMS from Mexico",
      "Her number is Mexican (+52): Spanish on first contact. She sends a photo by MMS; answers come back as SMS.",
      "+5215512340001",
      false,
      "es",
    );
    await maria.photo("late-blight", photos.lateBlight);
    // Spanish has ó and í, outside GSM-7: an SMS that carries more without them goes in GSM-7 letters.
    const summary = await maria.reply(/^Tiz[oó]n tard[ií]o del tomate \(muy probable\)\./);
    const code = codeIn(summary.text)!;
    expect(summary.text.endsWith(`\nTratamiento: escriba ${code} 2`)).toBe(true);
    await maria.text(`${code} 2`);
    const treatment = await maria.reply(/^Tiz[oó]n tard[ií]o del tomate\. Qu[eé] hacer: /);
    expect(gsm7Letters(treatment.text).endsWith(`Codigo del resultado: ${code}`)).toBe(true);
    checkConversation(maria);
    record("mms", maria);

    const luca = new TwilioFarmer(
      h,
      "Luca, MMS from Italy",
      "His number is Italian (+39): Italian on first contact.",
      "+393331230001",
      false,
      "it",
    );
    await luca.photo("unsure", photos.unsure);
    await luca.reply(/^Forse: .+, ma non ne siamo sicuri\. Per una risposta più sicura/);
    await luca.text("aiuto");
    await luca.reply(/^Invia una foto nitida/);
    checkConversation(luca);
    record("mms", luca);
  }, 120_000);

  it("SMS through Africa's Talking: results looked up by code, the treatment tail with its verb (Swahili, French)", async () => {
    const otieno = new AfricasTalkingFarmer(
      h,
      "Otieno, SMS from Kenya",
      "A basic phone with a Kenyan number (+254): Swahili. He texts the code a neighbour got on WhatsApp.",
      "+254722000401",
      "sw",
    );
    await otieno.sms(lateBlightCode);
    const summary = await otieno.reply(/^Bakajani chelewa la nyanya \(uwezekano mkubwa\)\./);
    expect(summary.text.endsWith(`\nMatibabu: tuma ${lateBlightCode} 2`)).toBe(true);
    await otieno.sms(`${lateBlightCode} 2`);
    await otieno.reply(/^Bakajani chelewa la nyanya\. La kufanya: /);
    otieno.expect("en");
    await otieno.sms("ENGLISH");
    await otieno.reply(/^Language set to English\.$/);
    await otieno.sms("HELP");
    await otieno.reply(/^Send a clear photo of one sick leaf/);
    checkConversation(otieno);
    record("sms", otieno);

    const fatou = new AfricasTalkingFarmer(
      h,
      "Fatou, SMS from Senegal",
      "A Senegalese number (+221): French. She texts the code of Awa's photo.",
      "+221771230501",
      "fr",
    );
    await fatou.sms(awaCode);
    const french = await fatou.reply(/^Mildiou de la tomate \(très probable\)\./);
    expect(french.text.endsWith(`\nTraitement : envoyez ${awaCode} 2`)).toBe(true);
    await fatou.sms("merci");
    await fatou.reply(/^Envoyez une photo nette/);
    checkConversation(fatou);
    record("sms", fatou);
  }, 60_000);

  it("USSD: the last real diagnosis, a French result read in Swahili, then all of it in French; accents on 80-character screens", async () => {
    const ussd = new AfricasTalkingFarmer(
      h,
      "Wanjiru, USSD from Kenya",
      "The same Kenyan number as on WhatsApp: her last diagnosis is there, although her last photo was no plant.",
      wanjiru.phone,
      "sw",
    );
    const last = await ussd.ussd(["1", "1", "1", "1", "1", "1", "1", "1"]);
    const wanjiruCode = codeIn(last[1]!.text)!;
    expect(last[1]!.text).toContain(`Namba: ${wanjiruCode}`);
    expect(
      last[1]!.text.startsWith(`${core.knowledge.name("tomato__late_blight", "sw")} (uwezekano mkubwa).`),
    ).toBe(true);
    expect(last.at(-1)!.end).toBe(true);
    expect(last.at(-1)!.text.endsWith(`Namba: ${wanjiruCode}`)).toBe(true);

    const awas = await ussd.ussd(["2", awaCode]);
    expect(awas[2]!.text).toContain(
      `${core.knowledge.name("tomato__late_blight", "sw")} (uwezekano mkubwa).`,
    );
    expect(awas[2]!.text).not.toMatch(/Mildiou|Agissez/);

    const [, menu, changed] = await ussd.ussd(["3", "2"], { after: 2, language: "fr" });
    expect(menu!.text).toBe(
      "Chagua lugha:\n1.English\n2.Français\n3.Kiswahili\n4.Español\n5.Português\n6.Italiano",
    );
    expect(changed).toEqual({ end: true, text: "Langue choisie : Français." });
    const french = await ussd.ussd(["1"]);
    expect(french[0]!.text.startsWith("Docteur des cultures")).toBe(true);
    expect(french[1]!.text.startsWith("Mildiou de la tomate (très probable).")).toBe(true);
    expect(french[1]!.text).toContain(`Code : ${wanjiruCode}`);
    checkConversation(ussd);
    record("ussd", ussd);

    const fatou = new AfricasTalkingFarmer(
      h,
      "Fatou, USSD from Senegal",
      "A Senegalese number (+221): French. She looks up John's maize photo: “maïs” is not GSM-7, so screens are measured as UCS-2 (80 characters).",
      "+221771230501",
      "fr",
    );
    const rust = await fatou.ussd(["2", rustCode, "1", "1", "1", "1", "1", "1", "1"]);
    expect(
      gsm7Letters(rust[2]!.text).startsWith(gsm7Letters("Rouille commune du maïs (très probable).")),
    ).toBe(true);
    expect(rust[2]!.text).toContain(`Code : ${rustCode}`);
    expect(rust.at(-1)!.end).toBe(true);
    checkConversation(fatou);
    record("ussd", fatou);
  }, 60_000);
});

const CHANNELS: Record<string, { title: string; intro: string }> = {
  telegram: {
    title: "Telegram: what farmers see",
    intro:
      "A photo shows “typing” while it is diagnosed; answers carry six language buttons that send the same answer again in that language; `/start` greets in the app's language.",
  },
  whatsapp: {
    title: "WhatsApp: what farmers see",
    intro:
      "No typing indicator on WhatsApp: a photo not answered within 5 s gets “photo received” first. A farmer's messages are answered in the order they came, also when the first one is retried.",
  },
  mms: {
    title: "MMS and SMS through Twilio: what farmers see",
    intro:
      "A photo sent by MMS is answered by SMS: at most three segments, cut between sentences, ending with how to get the treatment.",
  },
  sms: {
    title: "SMS through Africa's Talking: what farmers see",
    intro:
      "Basic phones look results up by their code; `CODE 2` gives the treatment; a language's name changes the language.",
  },
  ussd: {
    title: "USSD: what farmers see",
    intro:
      "Screens are written from the knowledge base in the caller's language and never cut: 182 GSM-7 characters, or 80 when a character needs UCS-2 (a screen too long for that goes in GSM-7 letters, without its accents).",
  },
};

async function writeTranscripts() {
  await mkdir(TRANSCRIPTS_DIR, { recursive: true });
  const source =
    "Written by `npm run transcripts` from `test/channels/conversations.test.ts`: real webhook payloads through the real worker, the real model and knowledge base; the provider's API is a local stand-in that records every message. Result codes and timings change from run to run.";
  for (const [channel, list] of conversations) {
    const { title, intro } = CHANNELS[channel]!;
    await writeTranscript(`${channel}.md`, transcriptMarkdown(title, `${intro}\n\n${source}`, list));
  }
}
