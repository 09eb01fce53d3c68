import { MEMORY_PHOTO_BYTES } from "../limits.js";
import type { StoredPhoto } from "./photos.js";

/** Entries that each hold a photo, by id, newest last. */
export interface PhotoMap<T> {
  set(id: string, value: T): void;
  get(id: string): T | undefined;
  delete(id: string): boolean;
  values(): IterableIterator<T>;
}

/**
 * What the service keeps in memory when it runs without Redis: the newest entries while their photos fit in
 * `budget` bytes, the oldest dropped first. A count alone was no bound: a HEIC is kept as sent (4 MB for a
 * phone photo), and 500 of them held 2 GB. The newest entry stays even when its photo alone is over budget.
 */
export function createPhotoMap<T>(
  photoOf: (value: T) => StoredPhoto,
  budget: number = MEMORY_PHOTO_BYTES,
): PhotoMap<T> {
  const entries = new Map<string, T>();
  let bytes = 0;
  const remove = (id: string) => {
    const value = entries.get(id);
    if (value === undefined) return false;
    bytes -= photoOf(value).data.length;
    return entries.delete(id);
  };
  return {
    set(id, value) {
      remove(id);
      entries.set(id, value);
      bytes += photoOf(value).data.length;
      while (bytes > budget && entries.size > 1) remove(entries.keys().next().value as string);
    },
    get: (id) => entries.get(id),
    delete: remove,
    values: () => entries.values(),
  };
}
