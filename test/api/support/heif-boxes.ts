/**
 * ISO-BMFF box edits on a HEIC written by heif-enc, to make the files an encoder will not: a `.heif` whose major
 * brand is `mif1`, a header that claims more pixels than the file holds, and an `irot` rotation like a phone's.
 */

interface Box {
  type: string;
  start: number;
  size: number;
}

/** The boxes between `start` and `end`; a FullBox's children start 4 bytes later (version and flags). */
function boxesIn(file: Buffer, start: number, end: number): Box[] {
  const boxes: Box[] = [];
  for (let at = start; at + 8 <= end; ) {
    const size = file.readUInt32BE(at);
    if (size < 8) throw new Error(`box at ${at}: 64-bit or open-ended sizes are not handled here`);
    boxes.push({ type: file.toString("latin1", at + 4, at + 8), start: at, size });
    at += size;
  }
  return boxes;
}

function child(file: Buffer, parent: Box, type: string, fullBox = false): Box {
  const found = boxesIn(file, parent.start + (fullBox ? 12 : 8), parent.start + parent.size).find(
    (b) => b.type === type,
  );
  if (!found) throw new Error(`no '${type}' box in '${parent.type}'`);
  return found;
}

function layout(file: Buffer) {
  const meta = boxesIn(file, 0, file.length).find((b) => b.type === "meta");
  if (!meta) throw new Error("no 'meta' box: not a HEIF file");
  const iprp = child(file, meta, "iprp", true);
  return {
    meta,
    iprp,
    ipco: child(file, iprp, "ipco"),
    ipma: child(file, iprp, "ipma"),
    iloc: child(file, meta, "iloc", true),
    pitm: child(file, meta, "pitm", true),
  };
}

/** The same file with another major brand in its `ftyp` box (the compatible brands are kept). */
export function withMajorBrand(heic: Buffer, brand: string): Buffer {
  const copy = Buffer.from(heic);
  if (copy.toString("latin1", 4, 8) !== "ftyp") throw new Error("the file does not start with 'ftyp'");
  copy.write(brand, 8, "latin1");
  return copy;
}

/** The same file whose `ispe` boxes (the image's size in the header) claim `width` × `height`. */
export function withClaimedSize(heic: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(heic);
  const { ipco } = layout(copy);
  const ispes = boxesIn(copy, ipco.start + 8, ipco.start + ipco.size);
  let patched = 0;
  for (const box of ispes.filter((b) => b.type === "ispe")) {
    copy.writeUInt32BE(width, box.start + 12);
    copy.writeUInt32BE(height, box.start + 16);
    patched++;
  }
  if (patched === 0) throw new Error("no 'ispe' box");
  return copy;
}

/**
 * The same file with an `irot` property: `quarterTurns` × 90° anti-clockwise, applied by readers when they display
 * the image (as a phone records a photo taken sideways). `items: "all"` rotates the thumbnail too; `"primary"`
 * leaves the thumbnail as stored, as phones write it.
 */
export function withRotation(
  heic: Buffer,
  quarterTurns: 1 | 2 | 3,
  items: "primary" | "all" = "primary",
): Buffer {
  return withTransformation(heic, "irot", quarterTurns, items);
}

/**
 * The same file with one transformative property of one byte (`irot`: quarter turns anticlockwise; `imir`: 0
 * mirrors about a vertical axis, 1 about a horizontal one) on the primary image or on every image item. The box goes
 * at the end of `ipco` and its association at the end of each chosen item's `ipma` entry; every enclosing box
 * grows, and `iloc`'s file offsets into the data after `meta` move by as much.
 */
export function withTransformation(
  heic: Buffer,
  type: "irot" | "imir",
  value: number,
  items: "primary" | "all",
): Buffer {
  const file = Buffer.from(heic);
  const { meta, iprp, ipco, ipma, iloc, pitm } = layout(file);
  const primary =
    file[pitm.start + 8] === 0 ? file.readUInt16BE(pitm.start + 12) : file.readUInt32BE(pitm.start + 12);
  const propertyIndex = boxesIn(file, ipco.start + 8, ipco.start + ipco.size).length + 1;

  // ipma: [version, flags] entry_count { item_ID, association_count, association[] }
  const ipmaVersion = file[ipma.start + 8]!;
  const wideAssociations = (file[ipma.start + 11]! & 1) === 1;
  const association = Buffer.alloc(wideAssociations ? 2 : 1);
  // The high bit marks the property essential: a reader that cannot rotate must not show the image.
  if (wideAssociations) association.writeUInt16BE(0x8000 | propertyIndex);
  else association.writeUInt8(0x80 | propertyIndex);
  let at = ipma.start + 16;
  const insertAt: number[] = [];
  for (let entries = file.readUInt32BE(ipma.start + 12); entries > 0; entries--) {
    const item = ipmaVersion < 1 ? file.readUInt16BE(at) : file.readUInt32BE(at);
    at += ipmaVersion < 1 ? 2 : 4;
    const count = file[at]!;
    const end = at + 1 + count * association.length;
    if (item === primary || items === "all") {
      file[at] = count + 1;
      insertAt.push(end);
    }
    at = end;
  }
  if (insertAt.length === 0) throw new Error(`no 'ipma' entry for the primary item ${primary}`);

  const property = Buffer.from([0, 0, 0, 9, ...Buffer.from(type, "latin1"), value]);
  const ipmaGrowth = insertAt.length * association.length;
  const grow = property.length + ipmaGrowth;
  shiftFileOffsets(file, iloc, meta.start + meta.size, grow);
  for (const [box, by] of [
    [meta, grow],
    [iprp, grow],
    [ipco, property.length],
    [ipma, ipmaGrowth],
  ] as const) {
    file.writeUInt32BE(box.size + by, box.start);
  }
  const ipcoEnd = ipco.start + ipco.size;
  const parts = [file.subarray(0, ipcoEnd), property];
  let from = ipcoEnd;
  for (const position of insertAt) {
    parts.push(file.subarray(from, position), association);
    from = position;
  }
  parts.push(file.subarray(from));
  return Buffer.concat(parts);
}

/** Adds `by` to every `iloc` file offset at or past `from` (construction method 0: offsets into the file). */
function shiftFileOffsets(file: Buffer, iloc: Box, from: number, by: number): void {
  const version = file[iloc.start + 8]!;
  let at = iloc.start + 12;
  const offsetSize = file[at]! >> 4;
  const baseOffsetSize = file[at + 1]! >> 4;
  const indexSize = version >= 1 ? file[at + 1]! & 15 : 0;
  at += 2;
  const read = (size: number, pos: number) => (size === 0 ? 0 : Number(file.readUIntBE(pos, size)));
  const shift = (size: number, pos: number) => {
    const value = read(size, pos);
    if (size > 0 && value >= from) file.writeUIntBE(value + by, pos, size);
  };
  if (offsetSize > 6 || baseOffsetSize > 6) throw new Error("8-byte iloc offsets are not handled here");
  let items = version < 2 ? file.readUInt16BE(at) : file.readUInt32BE(at);
  at += version < 2 ? 2 : 4;
  for (; items > 0; items--) {
    at += version < 2 ? 2 : 4; // item_ID
    const method = version >= 1 ? file.readUInt16BE(at) & 15 : 0;
    if (version >= 1) at += 2;
    at += 2; // data_reference_index
    const baseAt = at;
    const base = read(baseOffsetSize, baseAt);
    at += baseOffsetSize;
    const extents = file.readUInt16BE(at);
    at += 2;
    // Extent offsets count from the base offset when there is one: then only the base moves.
    if (method === 0) shift(baseOffsetSize, baseAt);
    for (let e = 0; e < extents; e++) {
      at += indexSize;
      if (method === 0 && base === 0) shift(offsetSize, at);
      at += offsetSize + (file[iloc.start + 12]! & 15);
    }
  }
}
