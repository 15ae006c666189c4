import { cancelOrder, readFirstOrderPage, readOrderPageAfter, readOrdersVersion } from "../db/orders";
import { ApiError } from "../errors";
import { ifNoneMatchMatches } from "../lib/etag";
import { orderListStream } from "../lib/order-stream";
import { Order, OrderIdParams } from "../schemas/order";
import { defineOperation } from "./operation";

const etagOf = (version: string) => `"orders-${version}"`;

export const listOrders = defineOperation({
  operationId: "listOrders",
  method: "get",
  path: "/store/orders",
  summary: "List every order",
  description:
    "Every order placed in the store, ascending by id, as one JSON array. Filtering and pagination are not " +
    "supported in v1 (they are planned for v2). Revalidate with If-None-Match to get 304 when nothing changed.",
  stability: "stable",
  responses: {
    200: { description: "All orders", body: Order.array(), headers: ["ETag"] },
    304: { description: "Not modified: the ETag in If-None-Match is current", headers: ["ETag"] },
  },
  errors: [],
  async handle(c) {
    const db = c.env.DB;
    // Only a client that revalidates pays for the version read; everyone else
    // gets version and first page in one round trip.
    if (c.req.header("If-None-Match") !== undefined) {
      const etag = etagOf(await readOrdersVersion(db));
      if (ifNoneMatchMatches(c.req.header("If-None-Match"), etag)) {
        return c.body(null, 304, { ETag: etag });
      }
    }
    const { version, rows } = await readFirstOrderPage(db);
    const requestId = c.get("requestId");
    const body = orderListStream(
      rows,
      (afterId) => readOrderPageAfter(db, afterId),
      (error) => console.error(JSON.stringify({ requestId, message: "order list stream aborted", error: String(error) })),
    );
    return c.body(body, 200, { "Content-Type": "application/json", ETag: etagOf(version) });
  },
});

export const cancelOrderOperation = defineOperation({
  operationId: "cancelOrder",
  method: "delete",
  path: "/store/orders/{orderId}",
  summary: "Cancel a pending order",
  description:
    "Cancels an order whose status is pending. Cancelling an order that is already cancelled succeeds again " +
    "and changes nothing, so a lost response can be retried safely. Shipped and delivered orders cannot be cancelled.",
  stability: "stable",
  responses: { 204: { description: "The order is cancelled" } },
  errors: ["invalid_order_id", "order_not_found", "order_already_shipped"],
  params: {
    schema: OrderIdParams,
    invalid: { code: "invalid_order_id", message: "orderId must be a decimal 64-bit integer such as 42." },
  },
  async handle(c, { orderId }) {
    const outcome = await cancelOrder(c.env.DB, orderId, new Date().toISOString());
    if (outcome === "not_found") throw new ApiError("order_not_found", `Order ${orderId} does not exist.`);
    if (outcome === "not_cancellable") {
      throw new ApiError("order_already_shipped", `Order ${orderId} has already shipped and cannot be cancelled.`);
    }
    return c.body(null, 204);
  },
});
