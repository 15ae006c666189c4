import { z } from "zod";
import { isCanonicalInt64 } from "../lib/int64";

/** An int64 path parameter, kept as its decimal text so it never passes through a double. */
export const Int64Id = z.string().refine(isCanonicalInt64);

export const OrderIdParams = z.object({ orderId: Int64Id });
