import type { FastifyPluginAsync, FastifyRequest, RouteShorthandOptions } from "fastify";
import type { AppDeps } from "../app.js";
import { MAX_INPUT_MEGAPIXELS } from "../diagnosis/image/limits.js";
import { BUSY_RETRY_SECONDS } from "../diagnosis/model/pool.js";
import type { DiagnosisContext } from "../diagnosis/types.js";
import { ApiError, FieldValidationError } from "../http-errors.js";
import { UPLOAD_WAIT_MS } from "../limits.js";
import { readForm } from "../plugins/multipart.js";
import { preparePhoto } from "../results/photos.js";
import { keepsApiPhoto } from "../results/record.js";
import {
  BadRequestError,
  InternalError,
  RateLimitError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError,
} from "../schemas/errors.js";
import { retryAfterHeader, withHeaders } from "../schemas/headers.js";
import { DiagnosisForm, type DiagnosisFormValues, withFormBooleans } from "../schemas/request.js";
import { DiagnosisResult } from "../schemas/result.js";
import { parseUserData } from "../schemas/user-data.js";
import { createUploadTurns } from "./upload-turns.js";

const DESCRIPTION = `Analyses one photo of a plant and returns the diagnosis and a treatment plan.

Send \`multipart/form-data\`; only \`image\` is required. The crop is detected automatically; \`crop_type\` and
\`region\` narrow the diagnosis. Rate limit: 30 requests per minute per IP, or the API key's own limit.

400: malformed multipart body, or an image that is empty, over 10 MB, not a decodable JPEG/PNG/WebP/HEIC/HEIF
(recognised from its bytes) or over ${MAX_INPUT_MEGAPIXELS} megapixels. 401: an invalid API key, or routing keys in \`user_data\`
without one. 422: a form field fails validation. 503: too many photos are already waiting for upload or
analysis; retry after \`Retry-After\` seconds.`;

const response = {
  200: withHeaders("The diagnosis", DiagnosisResult),
  400: withHeaders("Bad multipart body or unusable image", BadRequestError),
  401: withHeaders("Invalid API key, or routing keys in user_data without one", UnauthorizedError),
  422: withHeaders("Invalid form field", ValidationError),
  429: withHeaders("Rate limit exceeded", RateLimitError, retryAfterHeader(42)),
  500: withHeaders("Internal error", InternalError),
  503: withHeaders(
    "Too many photos waiting for analysis",
    ServiceUnavailableError,
    retryAfterHeader(BUSY_RETRY_SECONDS),
  ),
};

/** Checked before the body is read: a JSON or urlencoded body is a bad request, not a validation error. */
async function requireMultipart(request: FastifyRequest): Promise<void> {
  if (!/^multipart\/form-data\s*;/i.test(request.headers["content-type"] ?? "")) {
    throw new ApiError(400, "Send the request as multipart/form-data, with the photo in the `image` field");
  }
}

const diagnosisRoute: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  // Result delivery runs after the response; shutdown waits for what is still in flight.
  const pendingSinks = new Set<Promise<void>>();
  app.addHook("onClose", async () => {
    await Promise.allSettled(pendingSinks);
  });
  const { uploadsInFlight, uploadsWaiting, idleTimeoutMs } = deps.config.limits;
  /** Work an upload's turn waits for besides its answer. */
  const turnWork = new WeakMap<FastifyRequest, Promise<unknown>[]>();
  const turns = createUploadTurns({
    inFlight: uploadsInFlight,
    waiting: uploadsWaiting,
    maxWaitMs: UPLOAD_WAIT_MS,
  });

  const options = (url: string, operationId: string, summary: string): RouteShorthandOptions => ({
    config: { rateLimit: "diagnosis" },
    schema: {
      operationId,
      summary,
      description: DESCRIPTION,
      tags: ["diagnosis"],
      consumes: ["multipart/form-data"],
      body: DiagnosisForm,
      response,
      // The slash-less spellings work the same; the docs list the spec's two paths only.
      hide: !url.endsWith("/"),
    },
    preParsing: requireMultipart,
    // The form is read here so that the route's schema validates it (and answers 422 in one shape), once
    // the upload has its turn: until then its body stays unread. A waiting client is silent because of us,
    // so its idle timeout pauses meanwhile.
    preValidation: async (request, reply) => {
      const socket = request.raw.socket;
      socket?.setTimeout?.(0);
      // Listening before the wait: a client who leaves in the line must not be handed a turn that no
      // "close" would ever give back.
      const gone = new AbortController();
      const leave = () =>
        gone.abort(new ApiError(499, "The client closed the connection before its upload was read"));
      reply.raw.once("close", leave);
      if (socket?.destroyed) leave();
      const endTurn = await turns.take(gone.signal);
      const work: Promise<unknown>[] = [];
      turnWork.set(request, work);
      // The turn lasts until the answer is sent and the work started for it (the kept photo) is done.
      gone.signal.addEventListener("abort", () => void Promise.allSettled(work).then(endTurn), {
        once: true,
      });
      socket?.setTimeout?.(idleTimeoutMs);
      request.body = withFormBooleans(await readForm(request));
    },
  });

  const routes: [url: string, operationId: string, summary: string][] = [
    ["/diagnosis/", "createDiagnosis", "Diagnose a plant photo"],
    ["/diagnoses/", "createDiagnosisAlias", "Diagnose a plant photo (alias of /diagnosis/)"],
    ["/diagnosis", "createDiagnosisNoSlash", "Diagnose a plant photo"],
    ["/diagnoses", "createDiagnosisAliasNoSlash", "Diagnose a plant photo"],
  ];
  for (const [url, operationId, summary] of routes) {
    app.post(url, options(url, operationId, summary), async (request, reply) => {
      const form = request.body as DiagnosisFormValues;
      const { filename, mimetype, data } = form.image;
      request.log.debug({ filename, mimetype, bytes: data.length }, "image received");
      const routing = parseUserData(form.user_data);
      // Sending to a phone costs money and reaches a person: only a partner with a key may ask for it, never
      // an anonymous caller on the per-IP budget.
      if (routing && !request.apiClient) {
        reply.header("WWW-Authenticate", 'Bearer realm="crop-diagnosis"');
        throw new ApiError(
          401,
          "Sending a result to a farmer (user_data.channel) needs an API key (X-API-Key). Without one, leave out the routing keys.",
        );
      }
      if (routing && deps.deliverable && !deps.deliverable.has(routing.channel)) {
        const open = [...deps.deliverable];
        throw new FieldValidationError([
          {
            loc: ["body", "user_data", "channel"],
            msg:
              `This service cannot send results by ${routing.channel} (no provider for it, or no channel queue). ` +
              (open.length ? `It can send by ${open.join(", ")}.` : "It sends results by no channel."),
            type: "channel_unavailable",
          },
        ]);
      }
      const context: DiagnosisContext = {
        cropType: form.crop_type,
        region: form.region,
        growthStage: form.growth_stage,
        description: form.description,
        language: form.language,
        detailLevel: form.detail_level,
        includeBbox: form.include_bbox,
      };
      const diagnosed = await deps.diagnoser.diagnose(data, context, request.id);
      const sink = deps.resultSink;
      // The contract ties body and header together; do not rely on the core to have copied the id.
      const result = { ...diagnosed, request_id: request.id };
      // A photo worth keeping is prepared once the diagnosis is made, while the answer goes out, and inside the
      // upload's turn: its decode and the 10 MB upload it reads are bounded like the diagnosis's own, and it
      // does not delay the answer.
      const photo = sink && keepsApiPhoto(result, routing !== undefined) ? preparePhoto(data) : undefined;
      if (photo) turnWork.get(request)?.push(photo);

      if (sink) {
        const delivery = Promise.resolve()
          .then(() =>
            sink(result, {
              language: form.language,
              ...(photo ? { photo } : {}),
              source: "api",
              ...(routing ? { routing } : {}),
              ...(request.apiClient ? { client: request.apiClient.name } : {}),
              ...(form.region ? { region: form.region } : {}),
              ...(form.description ? { note: form.description } : {}),
              ...(form.crop_type ? { crop: form.crop_type } : {}),
            }),
          )
          .catch((err: unknown) =>
            request.log.error({ err }, "result sink failed; the response is unaffected"),
          )
          .finally(() => pendingSinks.delete(delivery));
        pendingSinks.add(delivery);
      }
      return result;
    });
  }
};

export default diagnosisRoute;
