import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";

/**
 * Every response, errors and 404s included, carries X-Request-ID = request.id, which is also the body's
 * `request_id` and the `request_id` of every log line of the request. The id is always ours (a UUID):
 * a client-supplied id could collide or smuggle text into logs.
 */
const requestId: FastifyPluginAsync = async (app) => {
  app.addHook("onRequest", async (request, reply) => {
    reply.header("X-Request-ID", request.id);
  });
};

export default fp(requestId, { name: "request-id", fastify: "5.x" });
