import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/app/worker";
import { expect } from "vitest";
import { defaultKey } from "./test-keys";

export const ORIGIN = "https://store-orders.test";

/**
 * Sends a request through the worker's fetch handler with the real bindings,
 * as a client would, with the default test key unless the request sets its
 * own Authorization (or `null` for none). It calls the handler directly:
 * going through `exports.default.fetch` gets slower with every request made
 * in a test file, which the limiter tests (thousands of requests) cannot afford.
 */
export function api(path: string, init: ApiInit = {}): Promise<Response> {
  return apiWith(env, path, init);
}

/**
 * How long a request's background work (waitUntil) is waited for. Sending
 * refusals and handing back leases take milliseconds; a lease's timer waits
 * up to its expiry (5 s) and is left to run, as the runtime would.
 */
const BACKGROUND_WAIT_MS = 250;

/** The same, with bindings of the test's choosing (a failing D1, a counting KV...). */
export async function apiWith(bindings: Env, path: string, init: ApiInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(clientRequest(path, init), bindings, ctx);
  await Promise.race([waitOnExecutionContext(ctx), new Promise((resolve) => setTimeout(resolve, BACKGROUND_WAIT_MS))]);
  return response;
}

type ApiInit = RequestInit & { key?: string | null };

/** The request a client would send: the default test key unless `init` says otherwise, an address of its own. */
export function clientRequest(path: string, init: ApiInit): Request {
  const { key = defaultKey.key, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${key}`);
  // Callers without a key are limited per address (IPv6 per /64): a fresh /64
  // per request keeps unrelated tests from sharing one budget. Tests of that limit set their own.
  if (!headers.has("CF-Connecting-IP")) headers.set("CF-Connecting-IP", `2001:db8:${randomGroup()}:${randomGroup()}::1`);
  return new Request(`${ORIGIN}${path}`, { ...rest, headers });
}

const randomGroup = () => Math.floor(Math.random() * 0x10000).toString(16);

export async function errorBodyOf(response: Response): Promise<{ code: string; message: string; status: number }> {
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const body = await response.json<Record<string, unknown>>();
  expect(Object.keys(body).sort()).toEqual(["code", "message", "status"]);
  expect(body.status).toBe(response.status);
  return body as { code: string; message: string; status: number };
}
