import { CROPS, type Crop } from "./types.js";

// Names farmers type for the six crops in the six service languages (and common English variants), so that
// `crop_type=mahindi` narrows like `crop_type=maize`. Keys are lower-case without accents.
const CROP_NAMES: Record<string, Crop> = {
  bean: "bean",
  beans: "bean",
  "common bean": "bean",
  haricot: "bean",
  haricots: "bean",
  maharagwe: "bean",
  frijol: "bean",
  frijoles: "bean",
  judia: "bean",
  feijao: "bean",
  fagiolo: "bean",
  fagioli: "bean",
  maize: "maize",
  corn: "maize",
  mais: "maize",
  mahindi: "maize",
  maiz: "maize",
  milho: "maize",
  granturco: "maize",
  pepper: "pepper",
  peppers: "pepper",
  chilli: "pepper",
  chillies: "pepper",
  chili: "pepper",
  chile: "pepper",
  aji: "pepper",
  peperoncino: "pepper",
  "bell pepper": "pepper",
  "sweet pepper": "pepper",
  capsicum: "pepper",
  poivron: "pepper",
  piment: "pepper",
  pilipili: "pepper",
  "pilipili hoho": "pepper",
  pimiento: "pepper",
  pimentao: "pepper",
  peperone: "pepper",
  potato: "potato",
  potatoes: "potato",
  "pomme de terre": "potato",
  "pommes de terre": "potato",
  viazi: "potato",
  "viazi mviringo": "potato",
  papa: "potato",
  patata: "potato",
  batata: "potato",
  rice: "rice",
  paddy: "rice",
  riz: "rice",
  mchele: "rice",
  mpunga: "rice",
  arroz: "rice",
  riso: "rice",
  tomato: "tomato",
  tomatoes: "tomato",
  tomate: "tomato",
  tomates: "tomato",
  nyanya: "tomato",
  jitomate: "tomato",
  pomodoro: "tomato",
  pomodori: "tomato",
};

// Other crops whose names hold one of ours: a soybean leaf is not a bean's, black pepper is no capsicum.
const OTHER_CROPS = [
  "sweet potato",
  "sweet potatoes",
  "patate douce",
  "patates douces",
  "viazi vitamu",
  "batata doce",
  "batata dulce",
  "camote",
  "patata dolce",
  "patata americana",
  "soy bean",
  "soy beans",
  "soya bean",
  "soya beans",
  "broad bean",
  "broad beans",
  "faba bean",
  "fava bean",
  "fava beans",
  "mung bean",
  "mung beans",
  "cocoa bean",
  "cacao bean",
  "coffee bean",
  "castor bean",
  "black pepper",
  "white pepper",
  "pilipili manga",
  "pimienta negra",
  "pimenta do reino",
  "pepe nero",
];

function normalise(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Whether `phrase` stands in `text` as whole words (both normalised). */
function names(text: string, phrase: string): boolean {
  return ` ${text} `.includes(` ${phrase} `);
}

/**
 * What a free-text `crop_type` names: one of the six crops the model knows, "several" of them, or null (another
 * crop). A name of ours inside longer text counts ("cherry tomato", "Irish potato", "sweet corn", "green beans"),
 * unless the text names another crop that holds it ("sweet potato", "soya bean").
 */
function readCrop(text: string): Crop | "several" | null {
  const key = normalise(text);
  const exact = CROP_NAMES[key];
  if (exact) return exact;
  if (OTHER_CROPS.some((other) => names(key, other))) return null;
  const named = new Set(
    Object.entries(CROP_NAMES)
      .filter(([name]) => names(key, name))
      .map(([, crop]) => crop),
  );
  if (named.size > 1) return "several";
  return named.size === 1 ? [...named][0]! : null;
}

/**
 * The crop a free-text `crop_type` names, or null when it names none of the six the model knows, or two of
 * them: which one the photo shows is then the model's to say, not the text's.
 */
export function parseCrop(text: string): Crop | null {
  const crop = readCrop(text);
  return crop === "several" ? null : crop;
}

/** Whether a `crop_type` names a crop the model does not cover (and none it does). */
export function namesUnsupportedCrop(text: string): boolean {
  return readCrop(text) === null;
}

/** The crop of a model class id (`tomato__late_blight` → tomato), or null for `non_plant`. */
export function cropOfClass(classId: string): Crop | null {
  const crop = classId.split("__")[0];
  return (CROPS as readonly string[]).includes(crop ?? "") ? (crop as Crop) : null;
}

/** The condition of a class id in lower snake case, as detections name it (`tomato__late_blight` → late_blight). */
export function conditionOfClass(classId: string): string {
  return classId.split("__")[1] ?? classId;
}
