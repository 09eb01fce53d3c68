import { describe, expect, it } from "vitest";
import { isPlant, MIN_PLANT_FRACTION, type PlantEvidence } from "../../src/diagnosis/image/is-plant.js";

const model = (extra: Partial<NonNullable<PlantEvidence["model"]>> = {}): PlantEvidence["model"] => ({
  nonPlantProbability: 0.01,
  nonPlantThreshold: 0.09,
  distance: 300,
  distanceThreshold: 1800,
  leavesFound: 0,
  ...extra,
});
const evidence = (extra: Partial<PlantEvidence> = {}): PlantEvidence => ({
  model: model(),
  plantFraction: 0.5,
  qualityIssue: null,
  ...extra,
});
const noColour = MIN_PLANT_FRACTION / 2;

describe("is-plant rule", () => {
  it("lets the model's non_plant vote and its distance each veto a green photo", () => {
    expect(isPlant(evidence())).toBe(true);
    expect(isPlant(evidence({ model: model({ nonPlantProbability: 0.09, leavesFound: 3 }) }))).toBe(false);
    expect(isPlant(evidence({ model: model({ distance: 1800, leavesFound: 3 }) }))).toBe(false);
  });

  it("vetoes a photo without leaf colour only when the leaf finder saw no leaf either", () => {
    expect(isPlant(evidence({ plantFraction: noColour }))).toBe(false);
    // Purple leaves (a colour negative, a maize leaf short of phosphorus) still have a leaf's shape.
    expect(isPlant(evidence({ plantFraction: noColour, model: model({ leavesFound: 1 }) }))).toBe(true);
  });

  it("ignores colour in a photo too dark to show any, and judges by colour alone without a model", () => {
    expect(isPlant(evidence({ plantFraction: 0, qualityIssue: "too_dark" }))).toBe(true);
    expect(isPlant(evidence({ model: null, plantFraction: noColour }))).toBe(false);
    expect(isPlant(evidence({ model: null, plantFraction: MIN_PLANT_FRACTION }))).toBe(true);
  });
});
