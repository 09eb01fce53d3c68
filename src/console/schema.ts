import { Type } from "@fastify/type-provider-typebox";

/**
 * A string enum for the console's (hidden) route schemas, built with the type provider's TypeBox so that
 * handlers read typed values; src/schemas/helpers.ts builds the documented ones with @sinclair/typebox.
 */
export const OneOf = <const T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values] });

export const CsrfOnly = Type.Object({ _csrf: Type.Optional(Type.String()) });

/**
 * Browsers send a textarea's line breaks as CR LF but count each as one character against its `maxlength`: read
 * them as LF, so an answer the browser let through is not refused for its line breaks.
 */
export function withLineFeeds<B>(body: B): B {
  if (body === null || typeof body !== "object") return body;
  return Object.fromEntries(
    Object.entries(body).map(([name, value]) => [
      name,
      typeof value === "string" ? value.replace(/\r\n?/g, "\n") : value,
    ]),
  ) as B;
}
