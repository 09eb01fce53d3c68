/** A client error whose message is safe to show as the response's `detail`. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** What went wrong, for a caller that words it otherwise (the console): e.g. Fastify's FST_REQ_FILE_TOO_LARGE. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** One entry of a 422 body (design.md): where the problem is, what it is, and a stable machine-readable type. */
export interface FieldProblem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A form field that the JSON schema cannot judge on its own (e.g. the JSON inside `user_data`): a 422. */
export class FieldValidationError extends Error {
  constructor(readonly problems: FieldProblem[]) {
    super(problems.map((p) => `${p.loc.join(".")}: ${p.msg}`).join("; "));
    this.name = "FieldValidationError";
  }
}
