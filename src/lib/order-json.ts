import type { OrderRow } from "../db/orders";

/**
 * Writes one order as JSON by hand: the integer columns arrive as decimal
 * text and go into the output digit for digit, so int64 ids survive intact.
 * Absent values are omitted, never null (CONTRACT section 3).
 */
export function orderJson(row: OrderRow): string {
  let json = `{"id":${row.id}`;
  if (row.petId !== null) json += `,"petId":${row.petId}`;
  if (row.quantity !== null) json += `,"quantity":${row.quantity}`;
  if (row.shipDate !== null) json += `,"shipDate":${JSON.stringify(toUtcDateTime(row.shipDate))}`;
  json += `,"status":${JSON.stringify(row.status)},"complete":${row.complete === 1}}`;
  return json;
}

/**
 * Ship dates are written by other systems; present them as RFC 3339 in UTC
 * when they parse, and as stored when they do not rather than drop them.
 */
function toUtcDateTime(value: string): string {
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}
