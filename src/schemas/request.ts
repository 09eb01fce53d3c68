import { type Static, Type } from "@sinclair/typebox";
import { MAX_INPUT_MEGAPIXELS } from "../diagnosis/image/limits.js";
import { CROPS, DETAIL_LEVELS, LANGUAGES } from "../diagnosis/types.js";
import type { UploadedFile } from "./file.js";
import { StringEnum } from "./helpers.js";

/** Upper bounds of the free-text fields (the spec leaves them open); docs/api.md lists them for partners. */
export const TEXT_LIMITS = { crop_type: 64, region: 100, growth_stage: 64, description: 2000 } as const;
/** `user_data` is caller metadata, not storage: 4 KB of UTF-8 (design.md). */
export const USER_DATA_MAX_BYTES = 4096;
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

const text = (maxLength: number, description: string, example: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength, description, examples: [example] }));

/**
 * The multipart form of POST /diagnosis/. Text parts arrive as strings: Fastify's Ajv coerces `include_bbox`
 * and fills the defaults, so the handler reads validated, complete values.
 */
export const DiagnosisForm = Type.Object(
  {
    image: Type.Unsafe<UploadedFile>({
      isFile: true,
      description:
        `The photo: JPEG, PNG, WebP, HEIC or HEIF, at most 10 MB and ${MAX_INPUT_MEGAPIXELS} megapixels. The format is recognised ` +
        "from the file's bytes; the declared content type and file name are ignored.",
    }),
    crop_type: text(
      TEXT_LIMITS.crop_type,
      `Crop in the photo. Optional: the crop is detected automatically. Recognised values narrow the diagnosis: ${CROPS.join(", ")} (also in the six languages, with common longer names such as \`cherry tomato\` and words such as \`tomato plant\`); another crop (\`sweet potato\` is one) is answered \`crop_not_supported\`.`,
      "tomato",
    ),
    region: text(
      TEXT_LIMITS.region,
      "Region or country where the photo was taken; narrows the diagnosis to diseases known there.",
      "Kenya",
    ),
    growth_stage: text(TEXT_LIMITS.growth_stage, "Growth stage of the crop.", "flowering"),
    description: text(
      TEXT_LIMITS.description,
      "Free text describing the symptoms.",
      "Brown spots with yellow rings on the lower leaves",
    ),
    language: Type.Optional(
      StringEnum(LANGUAGES, {
        default: "fr",
        description: "Language of the descriptive text (names, descriptions, advice). Keys stay English.",
        examples: ["en"],
      }),
    ),
    detail_level: Type.Optional(
      StringEnum(DETAIL_LEVELS, {
        default: "standard",
        description: "`simple` for farmers, `standard` for technicians, `expert` for agronomists.",
        examples: ["simple"],
      }),
    ),
    include_bbox: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "`true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`, `t`/`f`, `y`/`n`, in any case, as FastAPI reads them). When true, `detections` holds a box for each leaf whose own reading shows a named disease (every leaf found is read, which takes a little longer); otherwise it is null. The diagnosis is the same either way.",
        examples: [true],
      }),
    ),
    user_data: Type.Optional(
      Type.String({
        maxLength: USER_DATA_MAX_BYTES,
        description:
          "A JSON object (as text, at most 4 KB) of caller metadata; it is not echoed. Optional routing keys have " +
          'the result also sent to the farmer: `channel` ("sms", "whatsapp" or "telegram"), `phone` (E.164, ' +
          "required for sms and whatsapp) and `chat_id` (required for telegram). Invalid routing keys give 422, " +
          "as does a channel this service does not send by (`channel_unavailable`); routing keys without an API " +
          "key give 401.",
        examples: ['{"channel":"sms","phone":"+254712345678","device":"feature_phone"}'],
      }),
    ),
  },
  { description: "Send as multipart/form-data; only `image` is required." },
);

type Form = Static<typeof DiagnosisForm>;
/** The form after validation: Ajv's `useDefaults` has filled in every field that has a default. */
export type DiagnosisFormValues = Form & Required<Pick<Form, "language" | "detail_level" | "include_bbox">>;

/**
 * A form boolean as FastAPI (pydantic) reads it, in any case: a partner's client written against such a service
 * sends `True` (Python's str(True)), `1`, or `on` (an HTML checkbox).
 */
const FORM_BOOLEANS: Record<string, "true" | "false"> = {
  true: "true",
  t: "true",
  yes: "true",
  y: "true",
  on: "true",
  "1": "true",
  false: "false",
  f: "false",
  no: "false",
  n: "false",
  off: "false",
  "0": "false",
};
const BOOLEAN_FIELDS = Object.entries(DiagnosisForm.properties)
  .filter(([, schema]) => schema.type === "boolean")
  .map(([name]) => name);

/**
 * The form with its boolean fields spelled as the schema's coercion reads them (`true`, `false`); any other
 * value is left as sent, for the schema to refuse.
 */
export function withFormBooleans<T>(form: Record<string, T | string>): Record<string, T | string> {
  const out = { ...form };
  for (const name of BOOLEAN_FIELDS) {
    const value = out[name];
    const spelling = typeof value === "string" ? value.trim().toLowerCase() : undefined;
    if (spelling !== undefined && Object.hasOwn(FORM_BOOLEANS, spelling))
      out[name] = FORM_BOOLEANS[spelling]!;
  }
  return out;
}
