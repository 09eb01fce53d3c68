/** A refusal a console page explains in the reader's language: `key` is a console text (locales/console.json). */
export class PageError extends Error {
  constructor(
    readonly statusCode: number,
    readonly key: string,
    readonly params: Record<string, string | number> = {},
  ) {
    super(key);
    this.name = "PageError";
  }
}

/** The console text for a refusal that is not a PageError: by its status, so none is shown in English only. */
export function refusalKey(status: number): string {
  if (status === 404) return "errors.not_found";
  if (status === 403) return "errors.forbidden";
  return "errors.invalid";
}
