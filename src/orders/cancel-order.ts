import type { Context } from "hono";
import { defineOperation, type Stability } from "../framework/operations/define-operation";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { writeSession } from "../lib/d1-session";
import { bookmarkHeader } from "../read-your-writes/d1-bookmark";
import { cancelPendingOrder } from "./order-queries";
import type { OrderIdParams, OrderIdParamsV2 } from "./order-schemas";
import type { OwnWrites } from "../read-your-writes/own-writes";
import type { VersionMemory } from "../read-your-writes/recent-version";

/** How a version of the API names and labels the cancel: v1's, and v2's (the same operation, beta there). */
export interface CancelOrderIn {
  operationId: "cancelOrder" | "cancelOrderV2";
  stability: Stability;
  /** The order id as the version's document presents it: the same text on the wire in both. */
  params: typeof OrderIdParams | typeof OrderIdParamsV2;
  /** After a cancel that changed the order: the composition's hook, which nudges webhook delivery. */
  cancelled(c: Context<AppEnv>): void;
}

/** `DELETE /store/orders/{orderId}`, v1 and v2 alike; a cancel forgets the list's version and keeps its bookmark. */
export const cancelOrder = (versions: VersionMemory, ownWrites: OwnWrites, version: CancelOrderIn) =>
  defineOperation({
    operationId: version.operationId,
    scope: "orders:write",
    method: "delete",
    path: "/store/orders/{orderId}",
    summary: "Cancel a pending order",
    tag: "Orders",
    description:
      "Cancels an order whose status is pending. Cancelling an order that is already cancelled succeeds again " +
      "and changes nothing, so a lost response can be retried safely. Shipped and delivered orders cannot be " +
      "cancelled.",
    stability: version.stability,
    responses: {
      204: {
        description: "The order is cancelled. X-D1-Bookmark: send it with the next list to be sure to see this cancel.",
        headers: ["X-D1-Bookmark"],
      },
    },
    errors: ["invalid_order_id", "order_not_found", "order_already_shipped"],
    params: {
      schema: version.params,
      invalid: { code: "invalid_order_id", message: "orderId must be a decimal 64-bit integer such as 42." },
    },
    async handle(c, { orderId }) {
      const db = writeSession(c.env.DB);
      const outcome = await cancelPendingOrder(db, orderId, new Date().toISOString());
      if (outcome === "cancelled" || outcome === "already_cancelled") {
        // The canceller's next list must not use a version read before the cancel; a cancel that changed nothing
        // forgets nothing.
        versions.forget();
        ownWrites.note(db.getBookmark(), Date.now());
      }
      if (outcome === "cancelled") version.cancelled(c);
      if (outcome === "not_found") throw new ApiError("order_not_found", `Order ${orderId} does not exist.`);
      if (outcome === "not_cancellable") {
        throw new ApiError("order_already_shipped", `Order ${orderId} has already shipped and cannot be cancelled.`);
      }
      return c.body(null, 204, bookmarkHeader(db));
    },
  });
