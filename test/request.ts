import { expect } from "vitest";
import { exports } from "cloudflare:workers";

export const ORIGIN = "https://store-orders.test";

/** Sends a request through the worker's real fetch handler, as a client would. */
export function api(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${ORIGIN}${path}`, init));
}

export async function errorBodyOf(response: Response): Promise<{ code: string; message: string; status: number }> {
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const body = await response.json<Record<string, unknown>>();
  expect(Object.keys(body).sort()).toEqual(["code", "message", "status"]);
  expect(body.status).toBe(response.status);
  return body as { code: string; message: string; status: number };
}
