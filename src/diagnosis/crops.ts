import { CROPS, type Crop } from "./types.js";

// Names farmers type for the six crops in the six service languages (and common English variants), so that
// `crop_type=mahindi` narrows like `crop_type=maize`. Keys are lower-case, without accents or punctuation. A
// longer name is listed whole ("cherry tomato"): a crop whose name holds one of ours is often another crop
// ("sweet potato", "soya bean", "nyanya chungu", "feijao caupi"), and it must stay "not supported".
const CROP_NAMES = new Map<string, Crop>(
  Object.entries({
    bean: [
      "bean",
      "beans",
      "common bean",
      "common beans",
      "green bean",
      "green beans",
      "french bean",
      "french beans",
      "kidney bean",
      "kidney beans",
      "dry bean",
      "dry beans",
      "haricot",
      "haricots",
      "haricot vert",
      "haricots verts",
      "maharagwe",
      "maharage",
      "frijol",
      "frijoles",
      "judia",
      "judias",
      "feijao",
      "feijoes",
      "fagiolo",
      "fagioli",
    ],
    maize: ["maize", "corn", "sweet corn", "field corn", "mais", "mahindi", "maiz", "milho", "granturco"],
    pepper: [
      "pepper",
      "peppers",
      "bell pepper",
      "bell peppers",
      "sweet pepper",
      "sweet peppers",
      "chilli",
      "chillies",
      "chili",
      "chilies",
      "chilli pepper",
      "chili pepper",
      "hot pepper",
      "hot peppers",
      "capsicum",
      "poivron",
      "poivrons",
      "piment",
      "piments",
      "pilipili",
      "pilipili hoho",
      "pimiento",
      "pimientos",
      "chile",
      "aji",
      "pimentao",
      "pimentoes",
      "pimenta",
      "peperone",
      "peperoni",
      "peperoncino",
    ],
    potato: [
      "potato",
      "potatoes",
      "irish potato",
      "irish potatoes",
      "white potato",
      "pomme de terre",
      "pommes de terre",
      "viazi",
      "viazi mviringo",
      "papa",
      "papas",
      "patata",
      "patatas",
      "patate",
      "batata",
      "batatas",
    ],
    rice: ["rice", "paddy", "paddy rice", "riz", "mchele", "mpunga", "arroz", "riso"],
    tomato: [
      "tomato",
      "tomatoes",
      "cherry tomato",
      "cherry tomatoes",
      "roma tomato",
      "plum tomato",
      "tomate",
      "tomates",
      "tomate cerise",
      "nyanya",
      "jitomate",
      "pomodoro",
      "pomodori",
    ],
  } satisfies Record<Crop, string[]>).flatMap(([crop, names]) =>
    names.map((name) => [name, crop as Crop] as const),
  ),
);

// Words around a crop's name that say nothing about which crop it is ("tomato plant", "hojas de papa",
// "majani ya nyanya"), dropped from either end before the name is looked up.
const AROUND_A_NAME = new Set([
  ...["plant", "plants", "leaf", "leaves", "crop", "crops", "field", "my", "the", "a", "of"],
  ...[
    "plante",
    "plantes",
    "feuille",
    "feuilles",
    "culture",
    "de",
    "des",
    "du",
    "d",
    "la",
    "le",
    "les",
    "mon",
    "ma",
  ],
  ...["mmea", "mimea", "jani", "majani", "shamba", "zao", "la", "ya", "wa", "za", "cha", "vya"],
  ...["planta", "plantas", "hoja", "hojas", "cultivo", "el", "los", "las", "del", "mi"],
  ...["folha", "folhas", "do", "da", "dos", "das", "o", "meu", "minha"],
  ...["pianta", "piante", "foglia", "foglie", "coltura", "di", "il", "lo", "gli", "mio", "mia"],
]);

function normalise(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** One crop's name, maybe with words around it that do not change which crop it is. */
function nameOf(text: string): Crop | null {
  const words = text.split(" ");
  while (words.length > 1 && AROUND_A_NAME.has(words[0]!)) words.shift();
  while (words.length > 1 && AROUND_A_NAME.has(words.at(-1)!)) words.pop();
  return CROP_NAMES.get(words.join(" ")) ?? null;
}

// "tomato and potato", "maize/beans": each part names a crop.
const BETWEEN_CROPS = /\s+(?:and|et|na|y|e|ou|or|o)\s+|[/,+;&]/i;

/**
 * What a free-text `crop_type` names: one of the six crops the model knows, "several" of them, or null
 * (another crop, or words that are not a crop's name).
 */
function readCrop(text: string): Crop | "several" | null {
  const whole = nameOf(normalise(text));
  if (whole) return whole;
  const parts = text.split(BETWEEN_CROPS).map(normalise).filter(Boolean);
  if (parts.length < 2) return null;
  const crops = parts.map(nameOf);
  if (crops.every((crop) => crop === null)) return null;
  // Another crop beside one of ours ("maize and cassava") leaves the model to say which the photo shows.
  return crops.every((crop) => crop === crops[0]) ? crops[0]! : "several";
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
