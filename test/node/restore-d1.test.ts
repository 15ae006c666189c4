import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runRestore } from "../../scripts/restore-d1";
import { freePort } from "../../scripts/lib/ports";

/**
 * `npm run restore` (docs/operations.md#restoring-d1) against a fake wrangler
 * (test/support/fake-wrangler.mjs, which records its calls) and a fake
 * operator API: the sequence is noted before the restore and raised back
 * after it, in that order, and nothing is restored when it cannot be noted.
 */
const dir = mkdtempSync(join(tmpdir(), "store-orders-restore-"));
const statePath = join(dir, "fake-wrangler.json");
let server: Server;
let port: number;
let sequence: string;
let raiseFails = false;
const asked: string[] = [];

beforeAll(async () => {
  port = await freePort();
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      asked.push(`${request.method} ${request.url} ${body}`.trim());
      if (request.headers.authorization !== "Bearer token-for-restore-tests")
        return void response.writeHead(401).end("{}");
      if (request.method === "POST" && raiseFails)
        return void response.writeHead(500, { "Content-Type": "application/json" }).end('{"message":"D1 is down"}');
      if (request.method === "POST") sequence = (JSON.parse(body) as { atLeast: string }).atLeast;
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ sequence }));
    });
  });
  await new Promise<void>((ready) => server.listen(port, "127.0.0.1", ready));
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  asked.length = 0;
  raiseFails = false;
  sequence = "9007199254741000";
  writeFileSync(
    statePath,
    JSON.stringify({ worker: "store-orders-production", newVersion: "v", split: {}, tags: {}, failOn: [], calls: [] }),
  );
  process.env.STORE_ORDERS_WRANGLER = resolve("test/support/fake-wrangler.mjs");
  process.env.FAKE_WRANGLER_STATE = statePath;
  process.env.OPERATOR_TOKEN = "restore-tests:token-for-restore-tests";
});

async function restore(...args: string[]) {
  const lines: string[] = [];
  const status = await runRestore(
    [
      "--env",
      "production",
      "--timestamp",
      "2026-11-24T09:00:00Z",
      "--base-url",
      `http://127.0.0.1:${port}/v1`,
      ...args,
    ],
    {
      out: (line) => lines.push(line),
      err: (line) => lines.push(line),
    },
  );
  const calls = (JSON.parse(readFileSync(statePath, "utf8")) as { calls: string[][] }).calls.map((call) =>
    call.join(" "),
  );
  return { status, output: lines.join("\n"), calls };
}

describe("npm run restore", () => {
  it("notes the event sequence, restores, then raises the sequence back to what it noted", async () => {
    const { status, output, calls } = await restore();
    expect(status).toBe(0);
    expect(calls).toEqual(["d1 time-travel restore DB --env production --timestamp 2026-11-24T09:00:00Z"]);
    // Raised with room for the events written between the note and the restore, which feeds and webhooks saw.
    expect(asked).toEqual([
      "GET /admin/order-events/sequence",
      'POST /admin/order-events/sequence {"atLeast":"9007199254841000"}',
    ]);
    expect(output).toContain(
      "Order event sequence before the restore: 9007199254741000; it is raised to 9007199254841000 after it.",
    );
  });

  it("restores nothing when the sequence cannot be noted", async () => {
    process.env.OPERATOR_TOKEN = "restore-tests:wrong";
    const { status, output, calls } = await restore();
    expect(status).toBe(1);
    expect(calls).toEqual([]);
    expect(output).toContain("Not restored: the event sequence could not be noted (the operator API answered 401");
  });

  it("raises nothing when the restore fails, and --dry-run runs nothing", async () => {
    writeFileSync(
      statePath,
      JSON.stringify({ ...JSON.parse(readFileSync(statePath, "utf8")), failOn: ["time-travel"] }),
    );
    const failed = await restore();
    expect(failed.status).toBe(1);
    expect(asked).toEqual(["GET /admin/order-events/sequence"]);
    expect(failed.output).toContain("The restore failed; nothing changed");

    asked.length = 0;
    writeFileSync(statePath, JSON.stringify({ ...JSON.parse(readFileSync(statePath, "utf8")), failOn: [], calls: [] }));
    const planned = await restore("--dry-run");
    expect(planned.status).toBe(0);
    expect(planned.calls).toEqual([]);
    expect(asked).toEqual([]);
    expect(planned.output).toContain(
      "wrangler d1 time-travel restore DB --env production --timestamp 2026-11-24T09:00:00Z",
    );
  });

  it("says how to raise the sequence by hand when the raise fails after the restore, with a command that works", async () => {
    raiseFails = true;
    const { status, output, calls } = await restore();
    expect(status).toBe(1);
    expect(calls).toHaveLength(1);
    expect(output).toContain(
      "RESTORED, BUT THE EVENT SEQUENCE WAS NOT RAISED (the operator API answered 500: D1 is down)",
    );
    // The token without its name, as the operator API compares it; a JSON body, as it reads one.
    expect(output).toContain(
      `curl -X POST -H "Authorization: Bearer \${OPERATOR_TOKEN#*:}" -H "Content-Type: application/json" -d ` +
        `'{"atLeast":"9007199254841000"}' http://127.0.0.1:${port}/admin/order-events/sequence`,
    );
  });
});
