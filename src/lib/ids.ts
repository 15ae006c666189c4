import { z } from "zod";
import { CANONICAL_INTEGER, isCanonicalInt64 } from "./int64";

/**
 * The int64 schemas: digits go from D1 to the body as text, never a double; v1 writes JSON integers (the
 * specification's), v2 strings, since generators type int64 as a JavaScript number (docs/api.md#int64-ids-in-v2).
 */
const INTEGER =
  "A 64-bit integer that can exceed 2^53 (up to 9223372036854775807): parse it exactly, as a BigInt or a " +
  "decimal string, never as a double (which would round it to another id). Clients generated from this document " +
  "type it as a JavaScript number, which rounds it: read ids through v2 (/v2), which writes them as strings, or " +
  "through the TypeScript client (@store-orders/client, client/ in the API's repository), which keeps them exact.";
const DIGITS =
  "A 64-bit integer (up to 9223372036854775807) as a string of decimal digits, so that no JSON parser rounds it " +
  "beyond 2^53: keep it a string (or a BigInt), never a number.";

/** A path parameter is text on the wire in every version; v1's document presents it as the integer it means. */
const Int64Param = z
  .string()
  .refine(isCanonicalInt64)
  .meta({ type: "integer", format: "int64" } as Record<string, unknown>);

const Int64 = z.number().int().meta({ format: "int64" });

/** The same decimal text in bodies and parameters, which is what lets a client send back an id exactly as it got it. */
const Int64Digits = z.string().regex(CANONICAL_INTEGER).refine(isCanonicalInt64).meta({ format: "int64" });

/** v1's int64s, each with a description that warns about parsing them. */
export const int64Field = (what: string) => Int64.describe(`${what}. ${INTEGER}`);
export const int64Param = (what: string) => Int64Param.describe(`${what}. ${INTEGER}`);

/** v2's int64s, in bodies and parameters alike. */
export const int64String = (what: string) => Int64Digits.describe(`${what}. ${DIGITS}`);
