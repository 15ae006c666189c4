import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/app/worker";
import { isWaitingOutside } from "../../src/lib/waits-outside";
import { expect } from "vitest";
import { defaultKey, madeDefaultKey } from "./test-keys";

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

/** The same, with bindings of the test's choosing (a failing D1, a counting KV...). */
export async function apiWith(bindings: Env, path: string, init: ApiInit = {}): Promise<Response> {
  const context = recordingContext();
  const key = init.key === undefined ? (await defaultKey()).key : init.key;
  const response = await worker.fetch(clientRequest(path, { ...init, key }), bindings, context.ctx);
  await context.settled();
  return response;
}

/**
 * An execution context that keeps the request's background work (a refusal's record, a lease asked ahead, a
 * dispatcher's nudge, an audit row) to wait for: `settled()` waits for it, including what that work adds as it runs;
 * not for work that waits on a timer or on the client reading the body (src/lib/waits-outside.ts), which runs on as
 * the runtime would run it.
 */
export function recordingContext(): { ctx: ExecutionContext; settled(): Promise<void> } {
  const ctx = createExecutionContext();
  const work: Promise<unknown>[] = [];
  const recording: ExecutionContext = {
    waitUntil(promise) {
      if (!isWaitingOutside(promise)) work.push(promise);
      ctx.waitUntil(promise);
    },
    passThroughOnException: () => ctx.passThroughOnException(),
    props: ctx.props,
    exports: ctx.exports,
    tracing: ctx.tracing,
    mapVirtualHost: (fetcher, port) => ctx.mapVirtualHost(fetcher, port),
    abort: (reason) => ctx.abort(reason),
  };
  return {
    ctx: recording,
    async settled() {
      for (let settled = 0; settled < work.length; ) {
        const batch = work.length;
        await Promise.allSettled(work.slice(settled, batch));
        settled = batch;
      }
    },
  };
}

type ApiInit = RequestInit & { key?: string | null };

/**
 * The request a client would send: the default test key (made already: await defaultKey()) unless `init` says
 * otherwise, an address of its own.
 */
export function clientRequest(path: string, init: ApiInit): Request {
  const { key = madeDefaultKey().key, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${key}`);
  // Callers without a key are limited per address (IPv6 per /64): a fresh /64
  // per request keeps unrelated tests from sharing one account. Tests of that limit set their own.
  if (!headers.has("CF-Connecting-IP"))
    headers.set("CF-Connecting-IP", `2001:db8:${randomGroup()}:${randomGroup()}::1`);
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
