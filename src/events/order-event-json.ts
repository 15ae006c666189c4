/** An order event as clients receive it (docs/design/order-events.md), its order as v2 writes it. */
import { z } from "zod";
import { jsonWriter, type Cell } from "../lib/json-writer";
import { orderWriter, type DroppedValue } from "../orders/order-json";
import type { OrderRow } from "../orders/order-queries";
import { OrderV2 } from "../orders/order-schemas";

/** An event as the order_events table holds it; `order_row` and `previous_row` are JSON objects of text cells. */
export interface OrderEventRow {
  seq: string;
  type: string;
  created_at: string;
  order_row: string;
  previous_row: string | null;
  changed: string | null;
}

type OrderField = keyof typeof OrderV2.shape;

/** One Order field at a time, as v2's pages write it; `{}` when absent or unfit. */
const fieldWriters = Object.fromEntries(
  Object.entries(OrderV2.shape).map(([field, schema]) => [
    field,
    jsonWriter(z.object({ [field]: schema instanceof z.ZodOptional ? schema : schema.optional() })),
  ]),
) as Record<
  OrderField,
  (row: Record<string, Cell>, leftOut: (field: string, row: Record<string, Cell>) => void) => string
>;

/** `previous`: each changed field's old value as the list wrote it, null where there was none, so a clearing shows. */
function previousJson(row: Record<string, Cell>, changed: readonly OrderField[]): string {
  const fields = changed.map((field) => {
    const written = fieldWriters[field](row, () => {});
    return written === "{}" ? `${JSON.stringify(field)}:null` : written.slice(1, -1);
  });
  return `{${fields.join(",")}}`;
}

/** The event's JSON; what the writer left out of its order is noted in `dropped`, for one log line per request. */
export function orderEventJson(row: OrderEventRow, dropped: DroppedValue[]): string {
  const order = orderWriter(dropped, "v2")(JSON.parse(row.order_row) as OrderRow);
  const head =
    `{"id":"evt_${row.seq}","type":${JSON.stringify(row.type)},` +
    `"createdAt":${JSON.stringify(row.created_at)},"order":${order}`;
  if (row.previous_row === null) return `${head}}`;
  const changed = (row.changed ?? "").split(",").filter(Boolean) as OrderField[];
  return `${head},"previous":${previousJson(JSON.parse(row.previous_row) as Record<string, Cell>, changed)}}`;
}
