/**
 * The client of the bench's sequential rows (the lists, the walks, the
 * pages): node:http on one kept-alive connection, each request read to its
 * last byte. Not Node's `fetch`: its WHATWG streams cost this machine's
 * client about 0.5 ms a request and more for every chunk of a body, time the
 * rows counted as the service's. A walk of 100 pages paid it 100 times and
 * v1's list once (docs/design/performance.md#what-the-local-runtime-does-to-a-ratio).
 */
import { Agent, request } from "node:http";

export interface Fetched {
  status: number;
  body: Buffer;
}

export interface SequentialClient {
  get(path: string, headers: Record<string, string>): Promise<Fetched>;
  /**
   * Drops the connection, so no request goes out on a socket a restarted server closed; the next request opens a new
   * one.
   */
  disconnect(): void;
}

export function sequentialClient(origin: string): SequentialClient {
  let agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (path, headers) =>
      new Promise((resolve, reject) => {
        request(`${origin}${path}`, { agent, headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks) }));
          response.on("error", reject);
        })
          .on("error", reject)
          .end();
      }),
    disconnect() {
      agent.destroy();
      agent = new Agent({ keepAlive: true, maxSockets: 1 });
    },
  };
}
