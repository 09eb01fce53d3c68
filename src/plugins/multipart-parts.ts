import type { Readable } from "node:stream";

/**
 * Counts the parts of a multipart body as it streams past, from its delimiters (RFC 2046: CRLF, `--`, the
 * boundary; the first one may open the body without the CRLF). busboy silently drops a part it cannot name
 * (no `Content-Disposition: form-data; name=...`); comparing this count with the parts it handed over tells
 * such a body apart from a well-formed form that merely lacks a field.
 */
export function countParts(body: Readable, contentType: string): () => number | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const token = boundary?.[1] ?? boundary?.[2];
  if (!token) return () => undefined;
  const delimiter = Buffer.from(`\r\n--${token}`);
  const seam = delimiter.length - 1;
  // A virtual CRLF before the body, so that a delimiter opening it is found like every other one.
  let tail = Buffer.from("\r\n");
  let delimiters = 0;
  const count = (buffer: Buffer) => {
    for (let at = buffer.indexOf(delimiter); at >= 0; at = buffer.indexOf(delimiter, at + 1)) delimiters++;
  };
  body.on("data", (chunk: Buffer) => {
    // A delimiter split between two chunks lies wholly in neither: look for it across the seam.
    count(Buffer.concat([tail, chunk.subarray(0, seam)]));
    count(chunk);
    tail = Buffer.from(
      chunk.length >= seam
        ? chunk.subarray(chunk.length - seam)
        : Buffer.concat([tail, chunk]).subarray(-seam),
    );
  });
  // The closing delimiter ends the last part: n delimiters bound n - 1 parts.
  return () => Math.max(0, delimiters - 1);
}
