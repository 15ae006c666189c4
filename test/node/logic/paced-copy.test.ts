import { describe, expect, it } from "vitest";
import { pacedCopy } from "../../../src/lib/paced-copy";

const bytes = (n: number) => new Uint8Array([n]);

/** A source of `count` one-byte chunks that counts how many were read from it, failing at `failAt` if given. */
function source(count: number, failAt?: number) {
  let read = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (read === failAt) return controller.error(new Error("source failed"));
        if (read === count) return controller.close();
        controller.enqueue(bytes(read++));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, read: () => read };
}

/** A copy whose reader is driven by the test, so it can be slower than the client. */
function copyTarget(keep = true) {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, undefined, {
    highWaterMark: 0,
  });
  let opened = 0;
  return {
    target: { open: () => (opened++, writable), keep: async () => keep },
    reader: readable.getReader(),
    opened: () => opened,
  };
}

/** Reads the copy to its end; resolves with "closed" when it was completed, "aborted" when it was thrown away. */
async function drainCopy(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<{ state: "closed" | "aborted"; bytes: number[] }> {
  const bytes: number[] = [];
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) bytes.push(...chunk.value);
    return { state: "closed", bytes };
  } catch {
    return { state: "aborted", bytes };
  }
}

/**
 * Lets every chunk that can move, move: the copy and the client are promises
 * and streams in this process only, so a fixed number of event-loop turns
 * settles them however loaded the machine is (no wall clock).
 */
async function settle(turns = 50) {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<number[]> {
  const out: number[] = [];
  for await (const chunk of stream) out.push(...chunk);
  return out;
}

describe("pacedCopy", () => {
  it("gives the client and the copy the same bytes, and completes the copy", async () => {
    const src = source(50);
    const copy = copyTarget();
    const [client, copied] = await Promise.all([readAll(pacedCopy(src.stream, copy.target)), drainCopy(copy.reader)]);
    expect(client).toEqual([...Array(50).keys()]);
    expect(copied).toEqual({ state: "closed", bytes: client });
  });

  it("reads the source no further ahead than the slower side: a stalled copy holds the client back", async () => {
    const src = source(1_000);
    const copy = copyTarget();
    const client = pacedCopy(src.stream, copy.target).getReader();
    let served = 0;
    const clientReads = Array.from({ length: 10 }, () => client.read().then(() => served++));
    await settle();
    // The copy has read nothing: the client got at most the chunk the copy took in, and the source gave no more than
    // that and one waiting.
    expect(src.read()).toBeGreaterThanOrEqual(1);
    expect(src.read()).toBeLessThanOrEqual(2);
    expect(served).toBeLessThanOrEqual(1);
    for (let i = 0; i < 10; i++) await copy.reader.read();
    await Promise.all(clientReads);
    expect(served).toBe(10);
    expect(src.read()).toBeLessThanOrEqual(12);
  });

  it("takes nothing from the source, and opens no copy, until the client reads", async () => {
    const src = source(10);
    const copy = copyTarget();
    pacedCopy(src.stream, copy.target);
    await settle();
    expect(src.read()).toBe(0);
    expect(copy.opened()).toBe(0);
  });

  it("serves the client on when the copy fails", async () => {
    const src = source(20);
    const failing = new WritableStream<Uint8Array>({ write: () => Promise.reject(new Error("cache down")) });
    const client = await readAll(pacedCopy(src.stream, { open: () => failing, keep: async () => true }));
    expect(client).toHaveLength(20);
  });

  it("aborts the copy when the source fails, and when the list is not to be kept", async () => {
    const failingSource = source(20, 5);
    const copy = copyTarget();
    const copied = drainCopy(copy.reader);
    await expect(readAll(pacedCopy(failingSource.stream, copy.target))).rejects.toThrow("source failed");
    expect((await copied).state).toBe("aborted");

    const notKept = copyTarget(false);
    const notKeptCopy = drainCopy(notKept.reader);
    expect(await readAll(pacedCopy(source(5).stream, notKept.target))).toHaveLength(5);
    expect((await notKeptCopy).state).toBe("aborted");
  });
});
