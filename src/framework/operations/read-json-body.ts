import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../api-error";
import type { AppEnv } from "../app-env";

/** Bodies are small JSON objects: anything longer is refused unread. */
export const MAX_BODY_BYTES = 16_384;

/** The JSON body checked against `schema`: 415 not JSON, 413 too large, 400 naming what does not fit. */
export async function readJsonBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("Content-Type") ?? "")) {
    throw new ApiError("unsupported_media_type", "The body must be JSON, sent with Content-Type: application/json.");
  }
  let value: unknown;
  try {
    value = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await cappedBody(c.req.raw, MAX_BODY_BYTES)),
    );
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_body", "The body is not valid JSON.");
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join(".") : "the body";
    throw new ApiError("invalid_body", `${where}: ${issue.message}`.slice(0, 300));
  }
  return parsed.data;
}

/** The same for an optional body: none, or an empty one, reads as `{}` so its defaults apply. */
export function readOptionalJsonBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  const sent = c.req.raw.body !== null && c.req.header("Content-Length") !== "0";
  if (sent) return readJsonBody(c, schema);
  const parsed = schema.safeParse({});
  if (!parsed.success) throw new ApiError("invalid_body", "A body is needed here.");
  return Promise.resolve(parsed.data);
}

/** The body's bytes, at most `limit`: refused on its Content-Length before reading, or as soon as more arrive. */
export async function cappedBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const tooLarge = () => new ApiError("body_too_large", `The body is longer than ${limit} bytes.`);
  if (Number(request.headers.get("Content-Length")) > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  // Held as it arrives and joined once: memory follows the body's length, never the limit's.
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    if (size + chunk.value.byteLength > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(chunk.value);
    size += chunk.value.byteLength;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
