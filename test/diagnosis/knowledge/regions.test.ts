import { describe, expect, it } from "vitest";
import { presence, resolveRegion } from "../../../src/diagnosis/knowledge/regions.js";

const codes = (text: string) => resolveRegion(text)?.codes;

describe("resolveRegion", () => {
  it.each([
    ["Kenya", ["KE"]],
    ["KE", ["KE"]],
    ["ke", ["KE"]],
    ["kenya", ["KE"]],
    ["  KENYA  ", ["KE"]],
    ["Tanzania", ["TZ"]],
    ["Uganda", ["UG"]],
    ["Nigeria", ["NG"]],
    ["India", ["IN"]],
    ["Inde", ["IN"]],
    ["Italia", ["IT"]],
    ["Brasil", ["BR"]],
    ["Brésil", ["BR"]],
    ["Quénia", ["KE"]],
    ["Côte d'Ivoire", ["CI"]],
    ["Cote d Ivoire", ["CI"]],
    ["Ivory Coast", ["CI"]],
    ["DRC", ["CD"]],
    ["Myanmar", ["MM"]],
    ["Nakuru, Kenya", ["KE"]],
  ])("%s → %j", (text, expected) => {
    expect(codes(text)).toEqual(expected);
  });

  it("maps region names in several languages to the same set of countries", () => {
    const east = codes("East Africa");
    expect(east).toEqual(expect.arrayContaining(["KE", "TZ", "UG", "RW"]));
    expect(codes("Afrique de l'Est")).toEqual(east);
    expect(codes("afrique de l est")).toEqual(east);
    expect(codes("Afrika Mashariki")).toEqual(east);
    expect(codes("África Oriental")).toEqual(east);
    expect(codes("West Africa")).toContain("NG");
  });

  it("keeps the caller's wording as the label", () => {
    expect(resolveRegion(" Afrique de l'Est ")?.label).toBe("Afrique de l'Est");
  });

  it("returns null for what it does not know, rather than guessing", () => {
    expect(resolveRegion("")).toBeNull();
    expect(resolveRegion("   ")).toBeNull();
    expect(resolveRegion("Atlantis")).toBeNull();
    expect(resolveRegion("QQ")).toBeNull();
    expect(resolveRegion("EU")).toBeNull();
  });
});

describe("presence", () => {
  it("is present everywhere for an organism recorded worldwide", () => {
    expect(presence("PHYTIN", ["KE"])).toBe("present");
    expect(presence("PHYTIN", ["IT", "BR"])).toBe("present");
  });

  it("is absent where the distribution records absence (rice bacterial blight in Europe)", () => {
    expect(presence("XANTOR", ["IT"])).toBe("absent");
    expect(presence("XANTOR", ["it"])).toBe("absent");
    expect(presence("XANTOR", ["IN"])).toBe("present");
  });

  it("needs every country of a group absent to say absent; one presence is enough for present", () => {
    expect(presence("XANTOR", ["IT", "ES"])).toBe("absent");
    expect(presence("XANTOR", ["IT", "IN"])).toBe("present");
    expect(presence("XANTOR", ["IT", "KE"])).toBe("unknown");
  });

  it("is unknown where nothing is recorded, for unknown organisms and for no countries", () => {
    expect(presence("TYLCV0", ["KE"])).toBe("unknown");
    expect(presence("ZZZZZZ", ["KE"])).toBe("unknown");
    expect(presence("PHYTIN", [])).toBe("unknown");
  });

  it("works end to end from a region name", () => {
    expect(presence("XANTOR", resolveRegion("Italia")!.codes)).toBe("absent");
    expect(presence("XANTOR", resolveRegion("East Africa")!.codes)).toBe("unknown");
  });
});
