import { CROPS, type Crop } from "./types.js";

// Names farmers type for the six crops in the six service languages (and common English variants), so that
// `crop_type=mahindi` narrows like `crop_type=maize`. Keys are lower-case, without accents or punctuation. A
// longer name is listed whole ("cherry tomato"): a crop whose name holds one of ours is often another crop
// ("sweet potato", "soya bean", "nyanya chungu", "feijao caupi"), and it must stay "not supported".
const CROP_NAMES = new Map<string, Crop>(
  Object.entries({
    bean: [
      "snap bean",
      "snap beans",
      "string bean",
      "string beans",
      "bush bean",
      "bush beans",
      "climbing bean",
      "climbing beans",
      "black bean",
      "black beans",
      "red bean",
      "red beans",
      "haricot nain",
      "haricots nains",
      "haricot grimpant",
      "haricots grimpants",
      "poroto",
      "porotos",
      "habichuela",
      "habichuelas",
      "ejote",
      "ejotes",
      "judia verde",
      "judias verdes",
      "feijoeiro",
      "vagem",
      "vagens",
      "feijao verde",
      "fagiolino",
      "fagiolini",
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
    maize: [
      "sweetcorn",
      "popcorn",
      "mais doux",
      "mahindi matamu",
      "maiz dulce",
      "elote",
      "choclo",
      "milho verde",
      "granoturco",
      "mais dolce",
      "maize",
      "corn",
      "sweet corn",
      "field corn",
      "mais",
      "mahindi",
      "maiz",
      "milho",
      "granturco",
    ],
    pepper: [
      "green pepper",
      "green peppers",
      "red pepper",
      "red peppers",
      "yellow pepper",
      "yellow peppers",
      "chilli peppers",
      "chili peppers",
      "chilis",
      "capsicums",
      "piment fort",
      "pilipili kali",
      "chiles",
      "ajies",
      "pimenton",
      "pimento",
      "pimentos",
      "piri piri",
      "peperoncini",
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
      "peperone",
      "peperoni",
      "peperoncino",
    ],
    potato: [
      "white potatoes",
      "viazi ulaya",
      "viazi vya kizungu",
      "batata inglesa",
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
    ],
    rice: [
      "rice paddy",
      "riz paddy",
      "rice",
      "paddy",
      "paddy rice",
      "riz",
      "mchele",
      "mpunga",
      "arroz",
      "riso",
    ],
    tomato: [
      "cherry tomatoes",
      "roma tomatoes",
      "plum tomatoes",
      "tomates cerises",
      "jitomates",
      "tomateiro",
      "tomateiros",
      "pomodorini",
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
// "majani ya nyanya"), dropped from either end before the name is looked up. One line per language.
const AROUND_A_NAME = new Set(
  [
    "plant plants leaf leaves crop crops field farm garden seedling seedlings fruit fruits my the a of in",
    "plante plantes pied feuille feuilles culture de des du d la le les mon ma",
    "mmea mimea mche miche jani majani shamba bustani zao la ya wa za cha vya",
    "planta plantas mata hoja hojas cultivo de el la los las del mi",
    "pe planta folha folhas lavoura plantacao do da dos das o meu minha",
    "pianta piante piantina foglia foglie coltura campo di il lo gli mio mia",
  ].flatMap((words) => words.split(" ")),
);

// Names that are one of our crops in some places and another crop elsewhere: "batata" is a sweet potato in much of
// Latin America, "patate" in francophone Africa, "pimenta" black pepper in Portugal. Nothing is narrowed to
// them, and nothing refused: the model says what the photo shows.
const AMBIGUOUS = new Set(["batata", "batatas", "patate", "patates", "pimenta", "pimentas"]);

/** Every name of ours, clear or not: a text holding one is not called another crop. */
const OUR_NAMES = [...CROP_NAMES.keys(), ...AMBIGUOUS];

// Other crops whose names hold one of ours: a soybean leaf is not a bean's, black pepper is no capsicum. One
// line per name of ours they hold.
const OTHER_CROPS = [
  "sweet potato, sweet potatoes, patate douce, patates douces, viazi vitamu, batata doce, batata dulce, camote, " +
    "patata dolce, patata americana, potato yam, air potato, viazi vikuu, batata baroa, batata yacon",
  "soy bean, soy beans, soya bean, soya beans, broad bean, broad beans, faba bean, faba beans, fava bean, " +
    "fava beans, mung bean, mung beans, cocoa bean, cocoa beans, cacao bean, coffee bean, coffee beans, " +
    "castor bean, castor beans, yardlong bean, velvet bean, winged bean, locust bean, adzuki bean, lablab bean, " +
    "hyacinth bean, maharagwe ya soya, frijol de soya, frijol mungo, feijao soja, feijao caupi, feijao frade, " +
    "feijao guandu, feijao mungo, haricot mungo, haricot aile, fagiolo mungo, fagiolo di soia, fagiolo dall occhio",
  "black pepper, white pepper, long pepper, guinea pepper, ashanti pepper, sichuan pepper, betel pepper, " +
    "pilipili manga, pimienta negra, pimenta do reino, pepe nero, piment de la jamaique",
  "guinea corn, broom corn, corn salad, milho painco, milho miudo, milho zaburro",
  "tree tomato, husk tomato, tomate de arbol, tomate de arvore, nyanya chungu",
  "wild rice, riso selvatico",
].flatMap((names) => names.split(", "));

function normalise(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Whether `phrase` stands in `text` as whole words (both normalised). */
function holds(text: string, phrase: string): boolean {
  return ` ${text} `.includes(` ${phrase} `);
}

type Reading = Crop | "unclear" | "other";

/** One crop's name, maybe with words around it that do not change which crop it is. */
function nameOf(text: string): Reading {
  const words = text.split(" ");
  while (words.length > 1 && AROUND_A_NAME.has(words[0]!)) words.shift();
  while (words.length > 1 && AROUND_A_NAME.has(words.at(-1)!)) words.pop();
  const name = words.join(" ");
  const crop = CROP_NAMES.get(name);
  if (crop) return crop;
  if (AMBIGUOUS.has(name)) return "unclear";
  if (OTHER_CROPS.some((other) => holds(text, other))) return "other";
  // One of our names among words we do not know ("Potato Shangi", "tomato seedlings in pots"): likely ours, but
  // what the rest says is not ours to guess. Neither narrowed nor refused.
  return OUR_NAMES.some((ours) => holds(text, ours)) ? "unclear" : "other";
}

// "tomato and potato", "maize/beans": each part names a crop.
const BETWEEN_CROPS = /\s+(?:and|et|na|y|e|ou|or|o)\s+|[/,+;&]/i;

/**
 * What a free-text `crop_type` names: one of the six crops the model knows; "unclear" (several, one named
 * among words we do not know, or a name that is ours only in some places); or "other", a crop we do not cover.
 */
function readCrop(text: string): Reading {
  const parts = text.split(BETWEEN_CROPS).map(normalise).filter(Boolean);
  if (parts.length < 2) return nameOf(normalise(text));
  const readings = parts.map(nameOf);
  if (readings.every((r) => r === readings[0])) return readings[0]!;
  return readings.every((r) => r === "other") ? "other" : "unclear";
}

/** The crop a free-text `crop_type` names, or null when it names none of the six clearly (see readCrop). */
export function parseCrop(text: string): Crop | null {
  const crop = readCrop(text);
  return crop === "unclear" || crop === "other" ? null : crop;
}

/** Whether a `crop_type` names a crop the model does not cover (and none it does). */
export function namesUnsupportedCrop(text: string): boolean {
  return readCrop(text) === "other";
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
