import type { Redis } from "ioredis";
import sharp from "sharp";
import { PHOTO_JPEG_QUALITY, PHOTO_MAX_SIDE, RESULT_TTL_SECONDS } from "../limits.js";
import { createPhotoMap } from "./memory-photos.js";

export interface StoredPhoto {
  data: Buffer;
  /** image/jpeg for every photo sharp can read; a HEIC it cannot is kept as sent (image/heic). */
  type: string;
}

export interface PhotoStore {
  /** Keeps the photo of a result as long as the result (a re-save renews it). */
  save(requestId: string, photo: StoredPhoto): Promise<void>;
  get(requestId: string): Promise<StoredPhoto | undefined>;
  delete(requestIds: string[]): Promise<void>;
}

/**
 * What is kept of an upload: upright, at most PHOTO_MAX_SIDE on its long side, JPEG: what an officer needs
 * to judge a leaf and what a training set of the shared datasets' size holds (a 12 MP upload becomes
 * ~150 KB). sharp runs on libuv's pool, off the event loop. A HEIC (sharp has no HEVC decoder here) is kept
 * as sent; the console converts it when it is viewed.
 */
export async function preparePhoto(bytes: Buffer): Promise<StoredPhoto> {
  try {
    const data = await sharp(bytes, { failOn: "truncated" })
      .rotate()
      .resize(PHOTO_MAX_SIDE, PHOTO_MAX_SIDE, { fit: "inside", withoutEnlargement: true })
      .flatten({ background: "#ffffff" })
      // libjpeg-turbo, not mozjpeg: mozjpeg's trellis search made this encode cost more CPU than diagnosing
      // the photo (92 ms against 39 ms for a 12 MP JPEG, `npm run bench`), for files ~10 % smaller.
      .jpeg({ quality: PHOTO_JPEG_QUALITY })
      .toBuffer();
    return { data, type: "image/jpeg" };
  } catch {
    return { data: bytes, type: "image/heic" };
  }
}

export function createPhotoStore(redis: Redis | undefined, options: { prefix?: string } = {}): PhotoStore {
  return redis ? redisPhotos(redis, options.prefix ?? "cd:") : memoryPhotos();
}

function redisPhotos(redis: Redis, prefix: string): PhotoStore {
  const key = (id: string) => `${prefix}photo:${id}`;
  return {
    async save(requestId, photo) {
      await redis
        .multi()
        .hset(key(requestId), { type: photo.type, data: photo.data })
        .expire(key(requestId), RESULT_TTL_SECONDS)
        .exec();
    },
    async get(requestId) {
      const [type, data] = await redis.hmgetBuffer(key(requestId), "type", "data");
      return type && data ? { type: type.toString(), data } : undefined;
    },
    async delete(requestIds) {
      if (requestIds.length) await redis.del(...requestIds.map(key));
    },
  };
}

// One machine without Redis: the latest photos only, so memory stays bounded.
function memoryPhotos(): PhotoStore {
  const photos = createPhotoMap((kept: { photo: StoredPhoto; expires: number }) => kept.photo);
  return {
    async save(requestId, photo) {
      photos.set(requestId, { photo, expires: Date.now() + RESULT_TTL_SECONDS * 1000 });
    },
    async get(requestId) {
      const found = photos.get(requestId);
      return found && found.expires > Date.now() ? found.photo : undefined;
    },
    async delete(requestIds) {
      for (const id of requestIds) photos.delete(id);
    },
  };
}
