import { Type } from "@fastify/type-provider-typebox";

/**
 * A string enum for the console's (hidden) route schemas, built with the type provider's TypeBox so that
 * handlers read typed values; src/schemas/helpers.ts builds the documented ones with @sinclair/typebox.
 */
export const OneOf = <const T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values] });

export const CsrfOnly = Type.Object({ _csrf: Type.Optional(Type.String()) });
