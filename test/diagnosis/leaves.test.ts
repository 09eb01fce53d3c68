import { describe, expect, it } from "vitest";
import { decodeLeaves, iou, type Leaf } from "../../src/diagnosis/model/leaves.js";

const GRID = 8;
const SETTINGS = { threshold: 0.3, max: 10, nms_iou: 0.5 };
const logit = (p: number) => Math.log(p / (1 - p));

interface Cell {
  row: number;
  col: number;
  heat: number;
  /** Position of the centre inside the cell, 0-1 (sigmoid of the offset logits). */
  dx?: number;
  dy?: number;
  /** Box size in fractions of the view. */
  w?: number;
  h?: number;
}

/** A [5, GRID, GRID] leaf output, cold everywhere but the given cells. */
function leafMap(cells: Cell[]): Float32Array {
  const plane = GRID * GRID;
  const map = new Float32Array(5 * plane).fill(0);
  for (let i = 0; i < plane; i++) map[i] = -12;
  for (const { row, col, heat, dx = 0.5, dy = 0.5, w = 0.1, h = 0.1 } of cells) {
    const i = row * GRID + col;
    map[i] = logit(heat);
    map[plane + i] = logit(dx);
    map[2 * plane + i] = logit(dy);
    map[3 * plane + i] = Math.log(w);
    map[4 * plane + i] = Math.log(h);
  }
  return map;
}

const box = (x: number, y: number, w: number, h: number): Leaf => ({ x, y, w, h, heat: 1 });

describe("intersection over union", () => {
  it("is 1 for the same box, 0 for boxes apart or only touching, and overlap / union between", () => {
    expect(iou(box(0.1, 0.1, 0.3, 0.3), box(0.1, 0.1, 0.3, 0.3))).toBeCloseTo(1, 12);
    expect(iou(box(0, 0, 0.2, 0.2), box(0.5, 0.5, 0.2, 0.2))).toBe(0);
    expect(iou(box(0, 0, 0.2, 0.2), box(0.2, 0, 0.2, 0.2))).toBe(0);
    // Shifted by half its width: overlap 0.08, union 0.24.
    expect(iou(box(0, 0, 0.4, 0.4), box(0.2, 0, 0.4, 0.4))).toBeCloseTo(1 / 3, 12);
    // One inside the other: the small one's area over the large one's.
    expect(iou(box(0, 0, 0.4, 0.4), box(0.1, 0.1, 0.2, 0.2))).toBeCloseTo(0.25, 12);
  });
});

describe("leaves from the leaf finder's grid", () => {
  it("places a leaf at its cell plus the offsets, sized by exp of the log sizes, in fractions of the view", () => {
    const [leaf, ...rest] = decodeLeaves(
      leafMap([{ row: 2, col: 5, heat: 0.9, dx: 0.25, dy: 0.75, w: 0.2, h: 0.4 }]),
      GRID,
      SETTINGS,
    );
    expect(rest).toEqual([]);
    expect(leaf!.x + leaf!.w / 2).toBeCloseTo((5 + 0.25) / GRID, 6);
    expect(leaf!.y + leaf!.h / 2).toBeCloseTo((2 + 0.75) / GRID, 6);
    expect(leaf!.w).toBeCloseTo(0.2, 6);
    expect(leaf!.h).toBeCloseTo(0.4, 6);
    expect(leaf!.x).toBeCloseTo(5.25 / GRID - 0.1, 6);
    expect(leaf!.y).toBeCloseTo(2.75 / GRID - 0.2, 6);
    expect(leaf!.heat).toBeCloseTo(0.9, 6);
  });

  it("clips a box that reaches past the view's edge", () => {
    const [leaf] = decodeLeaves(
      leafMap([{ row: 0, col: 7, heat: 0.8, dx: 0.5, dy: 0.5, w: 0.5, h: 0.3 }]),
      GRID,
      SETTINGS,
    );
    const cx = 7.5 / GRID;
    expect(leaf!.x).toBeCloseTo(cx - 0.25, 6);
    expect(leaf!.x + leaf!.w).toBeCloseTo(1, 6);
    expect(leaf!.y).toBe(0);
    expect(leaf!.h).toBeCloseTo(0.5 / GRID + 0.15, 6);
  });

  it("keeps cells at or above the threshold only", () => {
    const leaves = decodeLeaves(
      leafMap([
        { row: 1, col: 1, heat: 0.3 },
        { row: 5, col: 5, heat: 0.29 },
      ]),
      GRID,
      SETTINGS,
    );
    expect(leaves.map((l) => l.heat)).toHaveLength(1);
    expect(leaves[0]!.x + leaves[0]!.w / 2).toBeCloseTo(1.5 / GRID, 6);
  });

  it("keeps a cell only when no neighbour is hotter; equal neighbours both stay", () => {
    const shoulder = decodeLeaves(
      leafMap([
        { row: 3, col: 3, heat: 0.9 },
        { row: 4, col: 4, heat: 0.8 }, // diagonal neighbour: part of the same peak
        { row: 3, col: 6, heat: 0.7 }, // two cells from both: a peak of its own
      ]),
      GRID,
      { ...SETTINGS, nms_iou: 1 },
    );
    expect(shoulder.map((l) => Math.round(l.heat * 10))).toEqual([9, 7]);
    const plateau = decodeLeaves(
      leafMap([
        { row: 6, col: 1, heat: 0.6 },
        { row: 6, col: 2, heat: 0.6 },
      ]),
      GRID,
      { ...SETTINGS, nms_iou: 1 },
    );
    expect(plateau).toHaveLength(2);
  });

  it("drops a box overlapping a hotter kept one by more than nms_iou, and keeps the strongest `max`", () => {
    const cells: Cell[] = [
      { row: 2, col: 2, heat: 0.7, w: 0.5, h: 0.5 },
      { row: 2, col: 4, heat: 0.9, w: 0.5, h: 0.5 }, // 2 cells = 0.25 to the right: IoU 1/3
      { row: 6, col: 6, heat: 0.5, w: 0.1, h: 0.1 },
      { row: 6, col: 0, heat: 0.4, w: 0.1, h: 0.1 },
    ];
    const all = decodeLeaves(leafMap(cells), GRID, SETTINGS);
    expect(all.map((l) => Math.round(l.heat * 10))).toEqual([9, 7, 5, 4]);
    const strict = decodeLeaves(leafMap(cells), GRID, { ...SETTINGS, nms_iou: 0.3 });
    expect(strict.map((l) => Math.round(l.heat * 10))).toEqual([9, 5, 4]);
    const capped = decodeLeaves(leafMap(cells), GRID, { ...SETTINGS, nms_iou: 0.3, max: 2 });
    expect(capped.map((l) => Math.round(l.heat * 10))).toEqual([9, 5]);
  });

  it("drops a box that clips to nothing", () => {
    const plane = GRID * GRID;
    const edge = leafMap([{ row: 4, col: 7, heat: 0.9 }]);
    expect(decodeLeaves(edge, GRID, SETTINGS)).toHaveLength(1);
    // Its centre on the view's right edge (x offset sigmoid 1) and a width too small to reach back inside.
    edge[plane + 4 * GRID + 7] = 40;
    edge[3 * plane + 4 * GRID + 7] = -80;
    expect(decodeLeaves(edge, GRID, SETTINGS)).toEqual([]);
  });

  it("finds nothing in a cold map", () => {
    expect(decodeLeaves(leafMap([]), GRID, SETTINGS)).toEqual([]);
  });
});
