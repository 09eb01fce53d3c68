import multipart from "@fastify/multipart";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError, FieldValidationError } from "../http-errors.js";
import { UploadedFile } from "../schemas/file.js";
import { MAX_IMAGE_BYTES } from "../schemas/request.js";
import { countParts } from "./multipart-parts.js";

/**
 * Parser limits: one file of at most 10 MB and a handful of short text fields. A text value is cut at
 * FIELD_BYTES; anything that long is already over every field's own limit (description: 2000 characters,
 * up to 8000 bytes of UTF-8), so a cut value is reported as too long instead of being silently shortened.
 */
const FIELD_BYTES = 16 * 1024;
const LIMITS = {
  files: 1,
  fileSize: MAX_IMAGE_BYTES,
  fields: 20,
  fieldSize: FIELD_BYTES,
  parts: 21,
  headerPairs: 20,
};

/**
 * busboy's buffer for one part. @fastify/busboy 3.2.6 (the latest) stalls for good on a part it skips (one
 * without a `Content-Disposition` header, say) when a single chunk pushes the skipped part past this mark:
 * the write callback it holds is never called, and the request is never answered. A socket delivers at most
 * 64 KiB per chunk, so a mark four times that is never reached by a skipped part, which is drained as it
 * arrives; a file part buffers up to it before the reader is paused.
 */
const PART_BUFFER_BYTES = 256 * 1024;

/** @fastify/multipart's limit errors (413 by default) are bad requests here (design.md: 400). */
const DETAIL_BY_CODE: Record<string, string> = {
  FST_REQ_FILE_TOO_LARGE: "The image is larger than 10 MB",
  FST_FILES_LIMIT: "Send exactly one file, in the `image` field",
  FST_FIELDS_LIMIT: `Too many form fields (at most ${LIMITS.fields})`,
  FST_PARTS_LIMIT: `Too many form parts (at most ${LIMITS.parts})`,
  FST_PROTO_VIOLATION: "A form field name is not allowed",
  FST_INVALID_JSON_FIELD_ERROR: "A form part declared as application/json is not valid JSON",
  FST_MP_PREMATURE_CLOSE: "The request ended before the multipart body was complete",
  FST_INVALID_MULTIPART_CONTENT_TYPE: "Send the request as multipart/form-data",
};

export type FormValue = string | UploadedFile | (string | UploadedFile)[];

/**
 * Reads the whole form: text parts as strings, file parts into memory. Every failure of the multipart body
 * itself is a 400 with a clear detail; the values are judged afterwards by the route's schema (422).
 */
export async function readForm(request: FastifyRequest): Promise<Record<string, FormValue>> {
  const form: Record<string, FormValue> = {};
  const add = (name: string, value: string | UploadedFile) => {
    const existing = form[name];
    form[name] =
      existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  };
  const partsSent = countParts(request.raw, request.headers["content-type"] ?? "");
  let partsRead = 0;
  try {
    for await (const part of request.parts({ limits: LIMITS, fileHwm: PART_BUFFER_BYTES })) {
      partsRead++;
      if (part.type === "file") {
        const data = await part.toBuffer();
        add(part.fieldname, new UploadedFile(part.filename, part.mimetype, data));
        continue;
      }
      if (part.valueTruncated) {
        throw new FieldValidationError([
          {
            loc: ["body", part.fieldname],
            msg: `Value is longer than ${FIELD_BYTES} bytes`,
            type: "string_too_long",
          },
        ]);
      }
      // A part sent as application/json arrives parsed; turn it back into the text the schema expects.
      const value = typeof part.value === "string" ? part.value : JSON.stringify(part.value);
      // Empty text fields are what many form libraries send for "not filled in".
      if (value !== "") add(part.fieldname, value);
    }
  } catch (error) {
    throw toClientError(error);
  }
  if ((partsSent() ?? 0) > partsRead) {
    throw new ApiError(
      400,
      "Malformed multipart body: every part needs a `Content-Disposition: form-data` header with a name",
    );
  }
  return form;
}

function toClientError(error: unknown): unknown {
  if (error instanceof FieldValidationError || error instanceof ApiError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && DETAIL_BY_CODE[code]) return new ApiError(400, DETAIL_BY_CODE[code], code);
  // busboy reports a broken body as a plain Error ("Unexpected end of form", "Malformed part header", ...).
  if (error instanceof Error && !("statusCode" in error)) {
    return new ApiError(400, `Malformed multipart body: ${error.message}`);
  }
  return error;
}

const multipartPlugin: FastifyPluginAsync = async (app) => {
  await app.register(multipart, { limits: LIMITS, throwFileSizeLimit: true });
};

export default fp(multipartPlugin, { name: "multipart", fastify: "5.x" });
