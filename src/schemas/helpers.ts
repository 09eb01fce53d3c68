import { type SchemaOptions, type Static, type TSchema, Type } from "@sinclair/typebox";

/**
 * A string enum as `{type: "string", enum: [...]}`: OpenAPI 3.0 has no `const`, so TypeBox's union of literals
 * would render as an unreadable `anyOf` in Swagger UI and ReDoc.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ ...options, type: "string", enum: [...values] });
}

/** `T | null`; @fastify/swagger turns the `anyOf` with `null` into OpenAPI 3.0's `nullable: true`. */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  return Type.Union([schema, Type.Null()], options);
}

/** A `$ref` to a schema registered with `app.addSchema`, typed as that schema (TypeBox 0.34 refs are untyped). */
export function Ref<T extends TSchema>(schema: T) {
  if (!schema.$id) throw new Error("Ref() needs a schema with an $id");
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}
