import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import worker from "../src/index";
import { expect } from "vitest";
import { defaultKey } from "./keys";

export const ORIGIN = "https://store-orders.test";

/**
 * Sends a request through the worker's real fetch handler, as a client would,
 * with the default test key unless the request sets its own Authorization
 * (or `null` for none).
 */
export function api(path: string, init: ApiInit = {}): Promise<Response> {
  return exports.default.fetch(clientRequest(path, init));
}

/** The same, with bindings of the test's choosing (a failing D1, a counting KV...). */
export async function apiWith(bindings: Env, path: string, init: ApiInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(clientRequest(path, init), bindings, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

type ApiInit = RequestInit & { key?: string | null };

function clientRequest(path: string, init: ApiInit): Request {
  const { key = defaultKey.key, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${key}`);
  return new Request(`${ORIGIN}${path}`, { ...rest, headers });
}

export async function errorBodyOf(response: Response): Promise<{ code: string; message: string; status: number }> {
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const body = await response.json<Record<string, unknown>>();
  expect(Object.keys(body).sort()).toEqual(["code", "message", "status"]);
  expect(body.status).toBe(response.status);
  return body as { code: string; message: string; status: number };
}
