/**
 * An order event as clients receive it (docs/design/order-events.md):
 * `{"id": "evt_<sequence>", "type", "createdAt", "order", "previous"?}`. The
 * order is written by v2's order writer (orders/order-json.ts), so its ids
 * are exact strings and its values exactly what a v2 page would show; the
 * event row keeps every column as text (migrations/0001_baseline.sql).
 */
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

/**
 * One Order field at a time, as v2's pages write it: `{"petId":"42"}`, or `{}` when the value is absent or does not
 * fit.
 */
const fieldWriters = Object.fromEntries(
  Object.entries(OrderV2.shape).map(([field, schema]) => [
    field,
    jsonWriter(z.object({ [field]: schema instanceof z.ZodOptional ? schema : schema.optional() })),
  ]),
) as Record<
  OrderField,
  (row: Record<string, Cell>, leftOut: (field: string, row: Record<string, Cell>) => void) => string
>;

/**
 * `previous`: the old value of each Order field that changed, as the list
 * would have written it; null where the order had no value there (or one
 * that did not fit), so a client sees the field was cleared or set.
 */
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
