import { z } from "zod";
import { OrderV2 } from "../orders/order-schemas";

export const ORDER_EVENT_TYPES = [
  "order.created",
  "order.cancelled",
  "order.shipped",
  "order.delivered",
  "order.updated",
  "order.deleted",
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/** Each Order field as `previous` holds it: its old value, or null where the order had none. */
const { id, petId, quantity, shipDate, status, complete } = OrderV2.shape;
const PreviousOrder = z
  .object({
    id: id.nullable().optional(),
    petId: petId.unwrap().nullable().optional(),
    quantity: quantity.unwrap().nullable().optional(),
    shipDate: shipDate.unwrap().nullable().optional(),
    status: status.nullable().optional(),
    complete: complete.nullable().optional(),
  })
  .meta({
    id: "OrderEventPrevious",
    description:
      "The old value of each Order field the change changed (null: it had none); {} when only the table's " +
      "own columns " +
      "changed.",
  });

export const OrderEvent = z
  .object({
    id: z
      .string()
      .regex(/^evt_[1-9][0-9]*$/)
      .describe("evt_ and the event's sequence number: unique, and the webhook-id of its deliveries"),
    type: z
      .enum(ORDER_EVENT_TYPES)
      .describe("created, a status changed to cancelled, shipped or delivered, any other change (updated), or deleted"),
    createdAt: z.iso.datetime().describe("When the change was committed, RFC 3339 in UTC"),
    order: OrderV2.describe("The order after the change (before it, for order.deleted)"),
    previous: PreviousOrder.optional().describe("order.updated and the status changes only"),
  })
  .meta({
    id: "OrderEvent",
    description: "One change to an order, whoever made it (this API or another system writing the database).",
  });

/** A page of the event feed: events ascending by sequence, and where to ask next (never null). */
export const OrderEventPage = z
  .object({
    data: z.array(OrderEvent).describe("The page's events, ascending by sequence"),
    nextCursor: z
      .string()
      .describe("Send it as after for the next page; also after an empty page, where the next event will be"),
  })
  .meta({ id: "OrderEventPage", description: "One page of the order event feed." });
