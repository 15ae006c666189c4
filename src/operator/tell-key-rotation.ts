import { z } from "zod";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { budgetOf } from "../keys/api-key-record";
import { keyOperation, limiterOf } from "./key-operation";

const Rotation = z.strictObject({
  endsAt: z.iso.datetime({ offset: true }).describe("When the rotated key's grace ends (now, for none)"),
});

/**
 * Tells a budget's object that one of its keys was rotated away (`npm run keys
 * -- rotate` does, after its KV write, as the v2 rotation does itself): from
 * every isolate's next call the key acts only on itself, and it is refused
 * from `endsAt` on, before KV has spread its record (docs/design/rate-limits.md#key-state).
 * The rotation itself is audited where it was made.
 */
export const tellKeyRotation = keyOperation(
  {
    operationId: "tellKeyRotation",
    method: "post",
    action: "rotation",
    summary: "Tell the budget's object of a rotation",
    description:
      "The key acts only on itself from every isolate's next call, and is refused from endsAt on, " +
      "everywhere within a " +
      "lease.",
    errors: ["not_found", "invalid_body", "unsupported_media_type", "body_too_large"],
  },
  async (c, { record }) => {
    const { endsAt } = await readJsonBody(c, Rotation);
    const ends = Date.parse(endsAt);
    if (Number.isNaN(ends)) throw new ApiError("invalid_body", "endsAt: not an instant.");
    const usage = await callDependency("rate limiter", () => limiterOf(c, record).rotate(record.id, ends));
    c.set("revocation", { budget: budgetOf(record), revoked: usage.revoked });
    return jsonBody(c, { keyId: record.id, budget: budgetOf(record), usage });
  },
);
