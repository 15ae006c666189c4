import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { readSession } from "../../lib/d1-session";
import type { OwnWrites } from "../../read-your-writes/own-writes";
import { sha256Hex } from "../../lib/digest";
import { ifNoneMatchMatches } from "../../lib/etag";
import { logLine } from "../../lib/log";
import { bookmarkHeader, bookmarkOf } from "../../read-your-writes/d1-bookmark";
import { droppedValuesWarning, orderWriter, type DroppedValue } from "../order-json";
import { readOrder } from "./page-queries";
import { OrderIdParamsV2, OrderV2 } from "../order-schemas";
import { textBody } from "../../framework/counted-body";

/** An order's ETag: from what the client would receive, so it changes exactly when the order's JSON does. */
const orderEtag = async (body: string) => `"order-${await sha256Hex(body, 12)}"`;

/** `GET /v2/store/orders/{orderId}`: one order. */
export const getOrderV2 = (ownWrites: OwnWrites) =>
  defineOperation({
    operationId: "getOrderV2",
    scope: "orders:read",
    method: "get",
    path: "/store/orders/{orderId}",
    summary: "Get one order",
    tag: "Orders",
    description: "One order by its id, with an ETag: revalidate with If-None-Match to get 304 while it is unchanged.",
    stability: "beta",
    responses: {
      200: { description: "The order", body: OrderV2, headers: ["ETag", "X-D1-Bookmark"] },
      304: {
        description: "Not Modified: the order is as the ETag in If-None-Match says. No body.",
        headers: ["ETag", "X-D1-Bookmark"],
      },
    },
    requestHeaders: ["If-None-Match", "X-D1-Bookmark"],
    errors: ["invalid_order_id", "order_not_found", "invalid_bookmark"],
    params: {
      schema: OrderIdParamsV2,
      invalid: { code: "invalid_order_id", message: "orderId must be a decimal 64-bit integer such as 42." },
    },
    async handle(c, { orderId }) {
      const db = readSession(c.env.DB, ownWrites.floor(bookmarkOf(c), Date.now()));
      const row = await readOrder(db, orderId);
      if (!row) throw new ApiError("order_not_found", `Order ${orderId} does not exist.`);
      const dropped: DroppedValue[] = [];
      const body = orderWriter(dropped, "v2")(row);
      if (dropped.length > 0) logLine("warn", c.get("requestId"), ...droppedValuesWarning("order", dropped));
      const headers = { ETag: await orderEtag(body), ...bookmarkHeader(db) };
      if (ifNoneMatchMatches(c.req.header("If-None-Match"), headers.ETag)) return c.body(null, 304, headers);
      return textBody(c, body, 200, { "Content-Type": "application/json", ...headers });
    },
  });
