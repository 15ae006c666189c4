import { z } from "zod";
import { isCanonicalInt64 } from "./int64";

/**
 * An int64 path parameter. It is validated and kept as decimal text so it
 * never passes through a double; the document presents it as what it means.
 */
const EXACT =
  "A 64-bit integer that can exceed 2^53 (up to 9223372036854775807): parse it exactly, as a BigInt or a " +
  "decimal string, never as a double (which would round it to another id).";

const Int64Param = z
  .string()
  .refine(isCanonicalInt64)
  .meta({ type: "integer", format: "int64" } as Record<string, unknown>);

/** An int64 in a response body, written digit for digit (never through a double). */
const Int64 = z.number().int().meta({ format: "int64" });

/** The int64 schemas with a description that warns about parsing them. */
export const int64Field = (what: string) => Int64.describe(`${what}. ${EXACT}`);
export const int64Param = (what: string) => Int64Param.describe(`${what}. ${EXACT}`);
