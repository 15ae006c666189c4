import { z } from "zod";
import { rfc3339ToUtc } from "./date-time";
import { isCanonicalInt64, isCanonicalSafeInteger } from "./int64";

/** A value as a D1 row hands it over: integers read as TEXT, and any type in any column (others write the tables). */
export type Cell = string | number | null;

/** A field's JSON, or undefined when the value does not have the type the schema promises. */
type FieldWriter = (value: Cell) => string | undefined;

/**
 * How the schema says a field is written: int64s digit for digit, other integers within the safe range, date-times as
 * RFC 3339 in UTC, enums only when listed, strings escaped, booleans from 0 and 1.
 */
function writerOf(schema: z.ZodType): FieldWriter {
  if (schema.meta()?.format === "int64") {
    // Digits and a sign only: nothing to escape.
    const quote = schema instanceof z.ZodString ? '"' : "";
    return (v) => (typeof v === "string" && isCanonicalInt64(v) ? quote + v + quote : undefined);
  }
  if (schema instanceof z.ZodISODateTime) {
    return (v) => {
      const utc = typeof v === "string" ? rfc3339ToUtc(v) : undefined;
      // The UTC form is digits and punctuation only: nothing to escape.
      return utc === undefined ? undefined : `"${utc}"`;
    };
  }
  if (schema instanceof z.ZodNumber) return (v) => (typeof v === "string" && isCanonicalSafeInteger(v) ? v : undefined);
  if (schema instanceof z.ZodEnum) {
    const options = new Set<unknown>(schema.options);
    return (v) => (options.has(v) ? JSON.stringify(v) : undefined);
  }
  if (schema instanceof z.ZodString) return (v) => (typeof v === "string" ? JSON.stringify(v) : undefined);
  if (schema instanceof z.ZodBoolean) return (v) => (v === 1 ? "true" : v === 0 ? "false" : undefined);
  throw new Error(`no JSON writer for a ${schema.def.type} field`);
}

/**
 * A writer of one schema's objects from rows keyed by its fields. A value is written only with the type the document
 * promises: an optional one that does not fit is left out and named to `leftOut`, a required one throws. Absent values
 * are omitted, never null.
 */
export function jsonWriter<S extends z.ZodObject>(schema: S) {
  const fields = Object.entries(schema.shape).map(([name, field]) => {
    const optional = field instanceof z.ZodOptional;
    const write = writerOf((optional ? field.unwrap() : field) as z.ZodType);
    return { name, prefix: `${JSON.stringify(name)}:`, optional, write };
  });
  return <Row extends Record<keyof S["shape"] & string, Cell>>(
    row: Row,
    leftOut: (field: string, row: Row) => void,
  ): string => {
    let json = "";
    for (const { name, prefix, optional, write } of fields) {
      const value = row[name as keyof Row] as Cell;
      if (value === null && optional) continue;
      const written = write(value);
      if (written !== undefined) json += (json === "" ? "{" : ",") + prefix + written;
      else if (optional) leftOut(name, row);
      else throw new Error(`${name} does not fit the schema`);
    }
    return json === "" ? "{}" : `${json}}`;
  };
}
