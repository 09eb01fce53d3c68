import type { InboundMessage } from "../../../channels/core/types.js";
import type { DiagnosisResult } from "../../../src/diagnosis/types.js";
import type { LabelledExample } from "../../../src/review/examples.js";

/** A stored result's data, as the core returns it: fixture data for rendering and look-up tests. */
export function resultFixture(overrides: Partial<DiagnosisResult> = {}): DiagnosisResult {
  return {
    request_id: crypto.randomUUID(),
    image_analysis: { is_plant: true, quality_issue: null, detected_crop: "tomato" },
    is_plant: true,
    crop_health: "unhealthy",
    outcome: "diagnosed",
    candidates: [{ id: "tomato__late_blight", name: "Late blight", confidence: 0.874 }],
    diagnoses: [
      {
        id: "tomato__late_blight",
        scientific_name: "Phytophthora infestans",
        eppo_code: "PHYTIN",
        name: "Late blight",
        category: "oomycete",
        confidence: 0.874,
        urgency: "high",
        description:
          "A water mould that spreads fast in cool, wet weather. Dark patches grow on leaves and stems. Fruit rots.",
        affected_parts: ["leaves", "stems", "fruit"],
        reference_images: [],
      },
    ],
    treatment: {
      immediate_actions: [
        "Remove and burn the sick leaves",
        "Spray a copper fungicide today",
        "Do not water the leaves, water the soil",
      ],
      recommended_products: ["Copper oxychloride"],
      natural_alternatives: [],
      prevention: ["Leave space between plants", "Plant resistant varieties", "Rotate crops every season"],
      urgency: "high",
    },
    detections: null,
    additional_notes: null,
    error: null,
    ...overrides,
  };
}

/** A labelled example as an officer's correction keeps it (a Telegram farmer who did not object), and a photo. */
export function labelledExample(
  overrides: Partial<LabelledExample> & Pick<LabelledExample, "id">,
): LabelledExample {
  const at = new Date().toISOString();
  return {
    code: "K7M4QX",
    label: "tomato__early_blight",
    source: "telegram",
    region: "unknown",
    takenAt: at,
    decision: "corrected",
    officer: "amina",
    decidedAt: at,
    consent: { basis: "informed_no_objection", at },
    modelOutcome: "unsure",
    ...overrides,
  };
}

export const EXAMPLE_PHOTO = { type: "image/jpeg", data: Buffer.from("jpeg") };

/** A Telegram text message of chat `chat` (its update id `id`), as the webhook queues it; French by its hint. */
export function telegramText(chat: number, id: string, text: string): InboundMessage {
  return {
    provider: "telegram",
    channel: "telegram",
    messageId: id,
    from: String(chat),
    owner: `tg:${chat}`,
    to: "bot",
    text,
    languageHint: "fr",
    receivedAt: new Date().toISOString(),
  };
}
