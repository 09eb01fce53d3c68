/** Image formats the service accepts (spec §8). HEIC and HEIF share one container and one decoder. */
export type ImageFormat = "jpeg" | "png" | "webp" | "heif";

// ISO-BMFF brands of HEIF stills and sequences (HEVC-coded and generic).
const HEIF_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]);
// AVIF files also list `mif1` as compatible; the spec does not accept AVIF, so its major brand rules it out.
const AVIF_BRANDS = new Set(["avif", "avis"]);

function ascii(bytes: Buffer, start: number, end: number): string {
  return bytes.toString("latin1", start, end);
}

/**
 * The format from the file's own magic bytes. The declared content type and file name are never trusted:
 * a client may label anything `image/jpeg`.
 */
export function sniffFormat(bytes: Buffer): ImageFormat | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (
    bytes.length >= 8 &&
    bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  ) {
    return "png";
  }
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP") return "webp";
  if (bytes.length >= 12 && ascii(bytes, 4, 8) === "ftyp") return isHeifFtyp(bytes) ? "heif" : null;
  return null;
}

// The ftyp box: size (4) "ftyp" major brand (4) minor version (4) compatible brands (4 each). A file is HEIF
// when the major brand or any compatible brand names a HEIF still or sequence.
function isHeifFtyp(bytes: Buffer): boolean {
  const boxSize = bytes.readUInt32BE(0);
  const end = Math.min(bytes.length, Math.max(boxSize, 16), 256);
  const major = ascii(bytes, 8, 12);
  if (AVIF_BRANDS.has(major)) return false;
  if (HEIF_BRANDS.has(major)) return true;
  for (let offset = 16; offset + 4 <= end; offset += 4) {
    if (HEIF_BRANDS.has(ascii(bytes, offset, offset + 4))) return true;
  }
  return false;
}
