import { z } from "zod";
import { isCanonicalInt64 } from "../lib/int64";

/**
 * An int64 path parameter. It is validated and kept as decimal text so it
 * never passes through a double; the document presents it as what it means.
 */
export const Int64Param = z
  .string()
  .refine(isCanonicalInt64)
  .meta({ type: "integer", format: "int64" } as Record<string, unknown>);

/** An int64 in a response body, written digit for digit (never through a double). */
export const Int64 = z.number().int().meta({ format: "int64" });
