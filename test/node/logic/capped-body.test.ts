import { describe, expect, it } from "vitest";
import { cappedBody } from "../../../src/framework/operations/read-json-body";

/** A request whose body arrives in the given chunks, with no Content-Length (chunked). */
function chunked(...chunks: string[]): Request {
  const encoded = chunks.map((chunk) => new TextEncoder().encode(chunk));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = encoded.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
  return new Request("https://store-orders.test/", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("a body read up to a limit", () => {
  it("holds as much memory as the body has, whatever the limit", async () => {
    const body = await cappedBody(chunked('{"a":', '"b"}'), 1_048_576);
    expect(new TextDecoder().decode(body)).toBe('{"a":"b"}');
    expect(body.buffer.byteLength).toBe(9);
  });

  it("refuses a body past the limit as it arrives, and one whose Content-Length says so before reading it", async () => {
    await expect(cappedBody(chunked("12345", "67890"), 8)).rejects.toMatchObject({ code: "body_too_large" });
    const declared = new Request("https://store-orders.test/", {
      method: "POST",
      body: "0123456789",
      headers: { "Content-Length": "10" },
    });
    await expect(cappedBody(declared, 8)).rejects.toMatchObject({ code: "body_too_large" });
    expect(declared.bodyUsed).toBe(false);
  });
});
