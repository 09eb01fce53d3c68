import { execFile, execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";

/** A leafy-looking photo: green noise, so encoders cannot shrink it to nothing. */
export async function photo(
  width: number,
  height: number,
  format: "jpeg" | "png" | "webp",
  quality = 90,
): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 3) {
    const n = (i * 2654435761) >>> 24;
    pixels[i] = 30 + (n % 60);
    pixels[i + 1] = 100 + (n % 120);
    pixels[i + 2] = 20 + (n % 40);
  }
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  if (format === "jpeg") return image.jpeg({ quality }).toBuffer();
  if (format === "png") return image.png().toBuffer();
  return image.webp({ quality }).toBuffer();
}

function hasHeifEnc(): boolean {
  try {
    execFileSync("sh", ["-c", "command -v heif-enc"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * heif-enc (Debian's libheif-examples; `npm test`'s pretest installs it) makes the real HEIC fixtures. Without
 * it the HEIC tests are skipped on a workstation, with a warning; in CI they run and fail, so a missing tool
 * can never turn the HEIC checks green there.
 */
export const HEIF_ENC = hasHeifEnc();
export const SKIP_HEIC = !HEIF_ENC && !process.env.CI;
if (SKIP_HEIC)
  console.warn("HEIC tests skipped: heif-enc (Debian package libheif-examples) is not installed");

/**
 * A real HEIC, encoded by Debian's heif-enc (libheif-examples) from a JPEG. `thumbnail`: the longer side of an
 * embedded thumbnail, as phones store one (an iPhone's is 320×240); none by default.
 */
export async function heic(jpeg: Buffer, options: { thumbnail?: number } = {}): Promise<Buffer> {
  if (!HEIF_ENC) throw new Error("heif-enc is not installed (Debian package libheif-examples)");
  const dir = await mkdtemp(path.join(tmpdir(), "heic-"));
  try {
    await writeFile(path.join(dir, "in.jpg"), jpeg);
    const thumbnail = options.thumbnail ? ["--thumb", String(options.thumbnail)] : [];
    await promisify(execFile)("heif-enc", [
      "-q",
      "60",
      ...thumbnail,
      "-o",
      path.join(dir, "out.heic"),
      path.join(dir, "in.jpg"),
    ]);
    return await readFile(path.join(dir, "out.heic"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
