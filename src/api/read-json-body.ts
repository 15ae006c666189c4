import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../api-error";
import type { AppEnv } from "../env";

/** Bodies are small JSON objects: anything longer is refused unread. */
const MAX_BODY_BYTES = 16_384;

/** The request's JSON body, checked against `schema`; 400 `invalid_body` naming what does not fit. */
export async function readJsonBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  if (!/^application\/json\b/i.test(c.req.header("Content-Type") ?? "")) throw new ApiError("invalid_body", "The body must be JSON, sent with Content-Type: application/json.");
  const text = await c.req.text();
  if (text.length > MAX_BODY_BYTES) throw new ApiError("invalid_body", `The body is longer than ${MAX_BODY_BYTES} bytes.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
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
