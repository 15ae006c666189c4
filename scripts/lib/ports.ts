import { createServer, type Server } from "node:net";

/**
 * Where free ports are looked for: below Linux's ephemeral range (32768 and up), which the kernel hands to outgoing
 * connections and to listeners on port 0, so a port found free stays free until the service it is for binds it.
 */
const FIRST = 20_000;
const PAST_LAST = 32_768;

const listening = (port: number): Promise<Server | undefined> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });

/** `count` distinct loopback ports nobody is listening on right now: each held until all are found, so none repeats. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    let candidate = FIRST + Math.floor(Math.random() * (PAST_LAST - FIRST));
    for (let tried = 0; ports.length < count && tried < PAST_LAST - FIRST; tried++) {
      candidate = candidate + 1 < PAST_LAST ? candidate + 1 : FIRST;
      const server = await listening(candidate);
      if (server === undefined) continue;
      servers.push(server);
      ports.push(candidate);
    }
    if (ports.length < count) throw new Error(`no ${count} free loopback ports from ${FIRST} to ${PAST_LAST - 1}`);
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** A loopback port nobody is listening on right now. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}
