import { createServer, type Server } from "node:net";

/** `count` distinct loopback ports nobody is listening on right now: each held until all are found, so none repeats. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", resolve);
      });
    }
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** A loopback port nobody is listening on right now. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}
