import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting to the server closing the connection. */
  ms: number;
}

/** Parses what the server wrote on a connection (one HTTP/1.1 response). */
export function parseResponse(raw: string, ms: number): RawResponse {
  const [head = "", ...rest] = raw.split("\r\n\r\n");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body: rest.join("\r\n\r\n"), ms };
}

/**
 * Opens a connection, lets `drive` write to it (all at once, or a byte now and then), and resolves with what
 * the server answered once it closes the connection (or `Connection: close` answers end it).
 */
export function rawExchange(
  port: number,
  drive: (socket: Socket) => void | Promise<void>,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let received = "";
    const socket = connect(port, "127.0.0.1", () => {
      Promise.resolve(drive(socket)).catch(() => {});
    });
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (!received) reject(new Error("the server closed the connection without an answer"));
      else resolve(parseResponse(received, performance.now() - started));
    });
  });
}
