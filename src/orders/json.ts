import type { OrderRow } from "./queries";
import { rfc3339ToUtc } from "../lib/date-time";
import { isCanonicalInt64, isCanonicalSafeInteger } from "../lib/int64";

/** A value left out of the list because it does not have the type the document promises. */
export interface DroppedValue {
  orderId: string;
  column: "pet_id" | "quantity" | "ship_date";
}

/**
 * Writes one order as JSON by hand: the integer columns arrive as decimal
 * text and go into the output digit for digit, so int64 ids survive intact.
 * Other systems write this table and SQLite lets them put any type in any
 * column, so a value is written only when it has the type the OpenAPI
 * document promises; one that does not is left out (every field but id,
 * status and complete is optional) and noted in `dropped`. Absent values are
 * omitted, never null (README, "Data model").
 */
export function orderJson(row: OrderRow, dropped: DroppedValue[]): string {
  // id is the rowid: SQLite refuses anything but an integer there.
  let json = `{"id":${row.id}`;
  if (row.petId !== null) {
    if (isCanonicalInt64(row.petId)) json += `,"petId":${row.petId}`;
    else dropped.push({ orderId: row.id, column: "pet_id" });
  }
  if (row.quantity !== null) {
    if (isCanonicalSafeInteger(row.quantity)) json += `,"quantity":${row.quantity}`;
    else dropped.push({ orderId: row.id, column: "quantity" });
  }
  if (row.shipDate !== null) {
    const shipDate = rfc3339ToUtc(row.shipDate);
    // The UTC form is digits and punctuation only: nothing to escape.
    if (shipDate !== undefined) json += `,"shipDate":"${shipDate}"`;
    else dropped.push({ orderId: row.id, column: "ship_date" });
  }
  json += `,"status":${JSON.stringify(row.status)},"complete":${row.complete === 1}}`;
  return json;
}
