import { jsonWriter } from "../lib/json-writer";
import type { OrderRow } from "./order-queries";
import { Order, OrderV2 } from "./order-schemas";

/** A value left out of the list because it does not have the type the document promises. */
export interface DroppedValue {
  orderId: string;
  column: string;
}

/** The table's name for each field that can be left out, for the log (docs/design/order-list.md#data-model). */
const COLUMNS: Record<string, string> = { petId: "pet_id", quantity: "quantity", shipDate: "ship_date" };

const writeOrder = { v1: jsonWriter(Order), v2: jsonWriter(OrderV2) };

/** A writer of orders as the version's schema says; values of another type go to `dropped`. */
export function orderWriter(dropped: DroppedValue[], version: keyof typeof writeOrder): (row: OrderRow) => string {
  const leftOut = (field: string, row: OrderRow) => dropped.push({ orderId: row.id, column: COLUMNS[field] ?? field });
  const write = writeOrder[version];
  return (row) => write(row, leftOut);
}

/** At most this many of a response's left-out values are named in its log line. */
const DROPPED_VALUES_LOGGED = 20;

/**
 * The one warning a response logs for values left out: how many, the first few by order and column, never the values.
 */
export function droppedValuesWarning(
  what: string,
  values: readonly DroppedValue[],
): [message: string, fields: { count: number; values: DroppedValue[] }] {
  return [
    `${what}: values that do not fit the Order schema were left out`,
    { count: values.length, values: values.slice(0, DROPPED_VALUES_LOGGED) },
  ];
}
