import { z } from "zod";
import { int64Field, int64Param, int64String } from "../lib/ids";

export const ORDER_STATUSES = ["pending", "shipped", "delivered", "cancelled"] as const;

export const Order = z
  .object({
    id: int64Field("Unique order identifier"),
    petId: int64Field("Identifier of the animal in this order").optional(),
    quantity: z.number().int().optional().describe("Number of units ordered"),
    shipDate: z.iso.datetime().optional().describe("Expected or actual ship date, RFC 3339 in UTC"),
    status: z.enum(ORDER_STATUSES).describe("Only pending orders can be cancelled"),
    complete: z.boolean().describe("Whether the order has been fulfilled"),
  })
  .meta({ id: "Order", description: "An order placed in the store. Fields without a value are omitted." });

/** v2's Order: v1's with int64s as digit strings (docs/api.md#int64-ids-in-v2); "Order" in v2's own document. */
export const OrderV2 = Order.extend({
  id: int64String("Unique order identifier"),
  petId: int64String("Identifier of the animal in this order").optional(),
}).meta(Order.meta()!);

/** The order-id path parameter of every v1 operation on one order. */
export const OrderIdParams = z.object({
  orderId: int64Param("The identifier of the order"),
});

/** v2's: the same text on the wire, which v2's document says is a string. */
export const OrderIdParamsV2 = z.object({
  orderId: int64String("The identifier of the order"),
});

/** A page of v2's order list: orders ascending by id, and where the next page starts (null on the last). */
export const OrderPage = z
  .object({
    data: z.array(OrderV2).describe("The page's orders, ascending by id"),
    nextCursor: z
      .string()
      .nullable()
      .describe("Send it as cursor, with the same filters, for the next page; null on the last page"),
  })
  .meta({ id: "OrderPage", description: "One page of the orders that match the filters." });
