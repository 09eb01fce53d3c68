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

/** The crop a free-text `crop_type` names, or null when it is not one of the six the model knows. */
export function parseCrop(text: string): Crop | null {
  const key = text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, " ");
  return CROP_NAMES[key] ?? null;
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
