import { describe, expect, it } from "vitest";
import { MEMORY_PHOTO_BYTES } from "../../src/limits.js";
import { createPhotoMap } from "../../src/results/memory-photos.js";
import { createPhotoStore, type StoredPhoto } from "../../src/results/photos.js";

const photo = (bytes: number): StoredPhoto => ({ data: Buffer.alloc(bytes), type: "image/heic" });

describe("photos kept in memory without Redis", () => {
  it("drop the oldest once their bytes pass the budget, however few they are", () => {
    const map = createPhotoMap((p: StoredPhoto) => p, 10);
    map.set("a", photo(4));
    map.set("b", photo(4));
    expect([...map.values()]).toHaveLength(2);
    map.set("c", photo(4));
    expect(map.get("a")).toBeUndefined();
    expect(map.get("b")?.data.length).toBe(4);
    expect(map.get("c")?.data.length).toBe(4);
  });

  it("count a replaced photo once, and keep the newest even when it alone is over budget", () => {
    const map = createPhotoMap((p: StoredPhoto) => p, 10);
    map.set("a", photo(6));
    map.set("a", photo(6));
    map.set("b", photo(4));
    expect(map.get("a")).toBeDefined();
    map.set("huge", photo(50));
    expect([...map.values()].map((p) => p.data.length)).toEqual([50]);
    expect(map.delete("huge")).toBe(true);
    map.set("c", photo(10));
    expect(map.get("c")).toBeDefined();
  });

  it("hold HEICs kept as sent within MEMORY_PHOTO_BYTES in the service's photo store", async () => {
    const store = createPhotoStore(undefined);
    const heic = 4 * 1024 * 1024;
    const count = Math.ceil(MEMORY_PHOTO_BYTES / heic) * 2;
    for (let i = 0; i < count; i++) await store.save(`r${i}`, photo(heic));
    expect(await store.get("r0")).toBeUndefined();
    expect((await store.get(`r${count - 1}`))?.data.length).toBe(heic);
    let kept = 0;
    for (let i = 0; i < count; i++) if (await store.get(`r${i}`)) kept++;
    expect(kept * heic).toBeLessThanOrEqual(MEMORY_PHOTO_BYTES);
    expect(kept).toBe(MEMORY_PHOTO_BYTES / heic);
  });
});
