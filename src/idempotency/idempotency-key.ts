/**
 * Retrying a write safely (docs/api.md#retrying-safely), as Stripe and the IETF draft have it: a write with an
 * Idempotency-Key runs once, and a retry with the same key from the same API key within 24 hours gets the first answer
 * again, marked `Idempotent-Replayed: true`. Kept sealed in the Account (it may hold a secret shown once); checked
 * after access, so a key that may no longer write is refused.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../framework/api-error";
import { textBody } from "../framework/counted-body";
import type { Operation } from "../framework/operations/define-operation";
import { cappedBody, MAX_BODY_BYTES } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { logLine } from "../lib/log";
import { base64 } from "../lib/base64";
import { openText, sealText } from "../lib/sealing";
import { accountOf } from "../account/key-record";
import { keyOfCaller } from "../keys/caller";
import type { BeginAnswer, KeptAnswer } from "../account/idempotent-answers";

/** 1 to 255 printable ASCII characters, as the header's description says. */
const IDEMPOTENCY_KEY = /^[\x20-\x7E]{1,255}$/;

/** The headers a kept answer is given again with: what it made, how to read it, and how new what it wrote is. */
const KEPT_HEADERS = ["Location", "Content-Type", "ETag", "X-D1-Bookmark"] as const;

const PURPOSE = "store-orders idempotent answer 1";

/** The writes of a route group that take an Idempotency-Key: every keyed POST, PATCH and DELETE but `except`. */
export function withIdempotencyKey(operations: readonly Operation[], except: readonly Operation[]): Operation[] {
  return operations.map((operation) =>
    operation.method === "get" || operation.scope === undefined || except.includes(operation)
      ? operation
      : {
          ...operation,
          idempotent: true,
          requestHeaders: [...(operation.requestHeaders ?? []), "Idempotency-Key"],
          errors: [
            ...operation.errors,
            "invalid_idempotency_key",
            "idempotency_key_in_flight",
            "idempotency_key_reused",
          ],
          responses: Object.fromEntries(
            Object.entries(operation.responses).map(([status, response]) => [
              status,
              { ...response, headers: [...(response.headers ?? []), "Idempotent-Replayed" as const] },
            ]),
          ),
        },
  );
}

/** The guard of an idempotent write: after the rate limit step has answered what the operation asks of a key. */
export function idempotency(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const idempotencyKey = c.req.header("Idempotency-Key");
    if (idempotencyKey === undefined) return next();
    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new ApiError(
        "invalid_idempotency_key",
        "Idempotency-Key must be 1 to 255 printable ASCII characters: a new one for each write, the same for its " +
          "retries.",
      );
    }
    const sealingKey = c.env.WEBHOOK_SECRETS_KEY;
    if (!sealingKey) {
      // Nothing could be kept sealed: the write runs as one without the header would, and operators are told.
      logLine("error", c.get("requestId"), "WEBHOOK_SECRETS_KEY is not set: an Idempotency-Key was not honoured");
      return next();
    }
    const keyId = keyOfCaller(c).id;
    const limiter = c.env.ACCOUNTS.getByName(accountOf(keyOfCaller(c)));
    const request = await requestOf(c);
    const sealedFor = `${keyId}\n${idempotencyKey}`;
    // The stub's type of a union answer is a union of stubs: it is plain data (structured clone), read as such.
    const decision = await callDependency(
      "rate limiter",
      () => limiter.beginIdempotent(keyId, idempotencyKey, request) as unknown as Promise<BeginAnswer>,
    );
    if (decision.kind === "bypass") return next();
    if (decision.kind === "replay") return replay(c, decision.answer, sealingKey, sealedFor);
    if (decision.kind === "reused") {
      throw new ApiError(
        "idempotency_key_reused",
        "This Idempotency-Key came with another request (method, path or body) from this key within 24 hours: use a " +
          "new one for a new write.",
      );
    }
    if (decision.kind === "in_flight") {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new ApiError(
        "idempotency_key_in_flight",
        "The first request with this Idempotency-Key is still running: retry after it, and get its answer.",
        { "Retry-After": String(seconds) },
      );
    }
    await next();
    const { startedAt } = decision;
    try {
      if (!kept(c.res.status)) {
        await callDependency("rate limiter", () =>
          limiter.abandonIdempotent(keyId, idempotencyKey, request, startedAt),
        );
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = c.res.headers.get(name);
        if (value !== null) headers[name] = value;
      }
      const body = await c.res.clone().text();
      const answer: KeptAnswer = {
        status: c.res.status,
        headers,
        sealedBody: await sealText(PURPOSE, sealingKey, sealedFor, body),
      };
      // Kept before the answer leaves: a retry that comes after it finds it (the write is made, whatever follows).
      await callDependency("rate limiter", () =>
        limiter.finishIdempotent(keyId, idempotencyKey, request, startedAt, answer),
      );
    } catch (error) {
      // The write's answer stands; only its keeping failed: a retry after RUNNING_MS runs it again.
      logLine("error", c.get("requestId"), "an answer for an Idempotency-Key was not kept", { error: String(error) });
    }
  };
}

/**
 * Kept: successes, and refusals a retry would get whatever happens. Not kept: 5xx and 429 (retry should run), and what
 * may change before the retry (401, 403, 409).
 */
const kept = (status: number) => status < 400 || (status < 500 && ![401, 403, 409, 429].includes(status));

/** What identifies a request under its key: method, path and query, and the SHA-256 of its body. */
async function requestOf(c: Context<AppEnv>): Promise<string> {
  const body = await cappedBody(c.req.raw.clone(), MAX_BODY_BYTES);
  const digest = base64(new Uint8Array(await crypto.subtle.digest("SHA-256", body)));
  const url = new URL(c.req.url);
  return `${c.req.method} ${url.pathname}${url.search}\n${digest}`;
}

async function replay(c: Context<AppEnv>, answer: KeptAnswer, sealingKey: string, sealedFor: string) {
  const body = await openText(PURPOSE, sealingKey, sealedFor, answer.sealedBody);
  const headers = { ...answer.headers, "Idempotent-Replayed": "true" };
  if (answer.status === 204) {
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    return c.body(null, 204);
  }
  return textBody(c, body, answer.status as ContentfulStatusCode, headers);
}
