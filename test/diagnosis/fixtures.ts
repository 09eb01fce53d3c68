import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import sharp from "sharp";

/** A green leaf with veins and brown spots on a grey-beige background, like a photo of one leaf on a bench. */
export function leafSvg(width: number, height: number): string {
  const veins = Array.from({ length: 9 }, (_, i) => {
    const x = width * (0.2 + 0.06 * (i + 1));
    return (
      `<path d="M ${x} ${height / 2} Q ${x + width * 0.05} ${height * 0.3} ${x + width * 0.12} ${height * 0.22}" stroke="#2f6b1f" stroke-width="3" fill="none"/>` +
      `<path d="M ${x} ${height / 2} Q ${x + width * 0.05} ${height * 0.7} ${x + width * 0.12} ${height * 0.78}" stroke="#2f6b1f" stroke-width="3" fill="none"/>`
    );
  }).join("");
  const spots = Array.from(
    { length: 14 },
    (_, i) =>
      `<circle cx="${width * (0.25 + (0.5 * ((i * 37) % 100)) / 100)}" cy="${height * (0.35 + (0.3 * ((i * 61) % 100)) / 100)}" r="${6 + (i % 4) * 3}" fill="#6b4a1f"/>`,
  ).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
  <rect width="100%" height="100%" fill="#b9b2a4"/>
  <ellipse cx="${width / 2}" cy="${height / 2}" rx="${width * 0.42}" ry="${height * 0.33}" fill="#4f9a2c"/>
  <line x1="${width * 0.1}" y1="${height / 2}" x2="${width * 0.92}" y2="${height / 2}" stroke="#2f6b1f" stroke-width="5"/>
  ${veins}${spots}</svg>`;
}

export function leafJpeg(width = 640, height = 480): Promise<Buffer> {
  return sharp(Buffer.from(leafSvg(width, height)))
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** Black text lines on white: a photographed invoice or form. */
export function documentJpeg(): Promise<Buffer> {
  const lines = Array.from(
    { length: 24 },
    (_, i) =>
      `<text x="40" y="${60 + i * 28}" font-family="sans-serif" font-size="20" fill="#000">Invoice line ${i}: quantity 12, price 4.50, total 54.00</text>`,
  ).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="800"><rect width="100%" height="100%" fill="#fff"/>${lines}</svg>`;
  return sharp(Buffer.from(svg)).jpeg().toBuffer();
}

/** A PNG whose header claims `width`×`height` pixels over a few bytes of data: a decompression bomb. */
export function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // colour type RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export { heic as toHeic } from "../api/support/images.js";

/**
 * A 64×48 HEIC (heif-enc 1.15.1) with three bytes of its HEVC parameter sets changed, found by mutating such a
 * file until libde265 complained: it prints "SPS error: ..." and the decode fails. Committed, because where the
 * parameter sets lie depends on the encoder's version.
 */
export const DAMAGED_SPS_HEIC = readFileSync(new URL("./fixtures/damaged-sps.heic", import.meta.url));
