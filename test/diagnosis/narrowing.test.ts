import { describe, expect, it } from "vitest";
import { namesUnsupportedCrop, parseCrop } from "../../src/diagnosis/crops.js";
import { type Names, narrowByCrop } from "../../src/diagnosis/narrowing.js";

const names: Names = { crop: (c) => `<${c}>`, disease: (id) => `<${id}>` };
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe("crop narrowing", () => {
  const model = new Map([
    ["tomato__late_blight", 0.6],
    ["tomato__healthy", 0.1],
    ["potato__late_blight", 0.2],
    ["potato__early_blight", 0.05],
    ["maize__common_rust", 0.05],
  ]);

  it("keeps only the stated crop's classes, renormalised, in the model's order", () => {
    const { probabilities, notes } = narrowByCrop(model, "potato", names);
    expect([...probabilities.keys()].sort()).toEqual(["potato__early_blight", "potato__late_blight"]);
    expect(sum(probabilities)).toBeCloseTo(1, 9);
    expect(probabilities.get("potato__late_blight")).toBeCloseTo(0.8, 9);
    expect(notes).toEqual([]); // 25 % of the belief was on potato: no disagreement worth a note
  });

  it("says so when the photo looks like another crop", () => {
    const { probabilities, notes } = narrowByCrop(model, "maize", names);
    expect([...probabilities.keys()]).toEqual(["maize__common_rust"]);
    expect(notes).toEqual([{ key: "crop_mismatch", params: { given: "<maize>", detected: "<tomato>" } }]);
  });

  it("understands crop names in the service's languages", () => {
    expect(parseCrop("Tomate")).toBe("tomato");
    expect(parseCrop("mahindi")).toBe("maize");
    expect(parseCrop("Pomme de terre")).toBe("potato");
    expect(parseCrop("  CORN ")).toBe("maize");
    expect(parseCrop("feijão")).toBe("bean");
    expect(parseCrop("cassava")).toBeNull();
  });

  it("reads a crop's longer names and the words around a name, but not other crops that hold one", () => {
    expect(parseCrop("cherry tomato")).toBe("tomato");
    expect(parseCrop("Tomato plant")).toBe("tomato");
    expect(parseCrop("tomato seedlings")).toBe("tomato");
    expect(parseCrop("hojas de papa")).toBe("potato");
    expect(parseCrop("majani ya nyanya")).toBe("tomato");
    expect(parseCrop("pé de feijão")).toBe("bean");
    expect(parseCrop("Irish potatoes")).toBe("potato");
    expect(parseCrop("sweet corn")).toBe("maize");
    expect(parseCrop("popcorn")).toBe("maize");
    expect(parseCrop("green beans")).toBe("bean");
    expect(parseCrop("haricots verts")).toBe("bean");
    expect(parseCrop("chilli")).toBe("pepper");
    expect(parseCrop("peperoni")).toBe("pepper");
    expect(parseCrop("pilipili hoho")).toBe("pepper");
    expect(parseCrop("tomatoes, tomato")).toBe("tomato");
    expect(parseCrop("constructor")).toBeNull();
    for (const other of [
      "sweet potato",
      "Soya beans",
      "black pepper",
      "viazi vitamu",
      "nyanya chungu",
      "patate douce",
      "feijão-caupi",
      "guinea corn",
      "tree tomato",
      "wild rice",
      "cassava and yams",
    ]) {
      expect(parseCrop(other), other).toBeNull();
      expect(namesUnsupportedCrop(other), other).toBe(true);
    }
    // Unclear: two crops, one of ours among words we do not know, or a name that is ours only in some places.
    // Nothing is narrowed and nothing refused: the model says what the photo shows.
    for (const unclear of [
      "tomato and potato",
      "maize/beans",
      "nyanya na viazi",
      "maize and cassava",
      "maize (hybrid H614)",
      "Potato Shangi",
      "batata",
      "pimenta",
    ]) {
      expect(parseCrop(unclear), unclear).toBeNull();
      expect(namesUnsupportedCrop(unclear), unclear).toBe(false);
    }
  });
});
