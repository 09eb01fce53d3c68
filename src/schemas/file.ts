import type { FastifyServerOptions } from "fastify";

/** The `image` part of a multipart form, read into memory (at most 10 MB, enforced while streaming). */
export class UploadedFile {
  constructor(
    readonly filename: string,
    /** As declared by the client; informative only: the core sniffs the real format from the bytes. */
    readonly mimetype: string,
    readonly data: Buffer,
  ) {}
}

/**
 * Ajv keyword `isFile`: the value is an UploadedFile, i.e. the field arrived as a file part. Unlike
 * @fastify/multipart's own `isFile`, it does not rewrite the schema while compiling, so one schema can serve
 * several routes; the docs plugin shows it as `{type: string, format: binary}`.
 */
// Ajv is Fastify's dependency, not ours: take its plugin type from Fastify's options.
type AjvPlugin = Extract<
  NonNullable<NonNullable<FastifyServerOptions["ajv"]>["plugins"]>[number],
  (...args: never[]) => unknown
>;

export const fileKeyword: AjvPlugin = (ajv) =>
  ajv.addKeyword({
    keyword: "isFile",
    schemaType: "boolean",
    validate: (expected: boolean, data: unknown) => data instanceof UploadedFile === expected,
    error: { message: "must be a file" },
  });
