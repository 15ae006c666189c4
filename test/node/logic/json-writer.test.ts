import { describe, expect, it } from "vitest";
import { z } from "zod";
import { jsonWriter } from "../../../src/lib/json-writer";
import { int64Field } from "../../../src/lib/ids";

const Thing = z.object({
  id: int64Field("An id"),
  name: z.string(),
  size: z.number().int().optional(),
  at: z.iso.datetime().optional(),
  kind: z.enum(["a", "b"]).optional(),
  done: z.boolean(),
});
const write = jsonWriter(Thing);

describe("jsonWriter", () => {
  it("writes each field as the schema says, in the schema's order", () => {
    const json = write(
      {
        id: "9223372036854775807",
        name: 'a "quoted"\nname',
        size: "3",
        at: "2026-01-01T01:00:00+01:00",
        kind: "b",
        done: 1,
      },
      () => {},
    );
    expect(json).toBe(
      `{"id":9223372036854775807,"name":${JSON.stringify('a "quoted"\nname')},"size":3,` +
        '"at":"2026-01-01T00:00:00.000Z","kind":"b","done":true}',
    );
    expect(JSON.parse(json).name).toBe('a "quoted"\nname');
  });

  it("leaves out optional values of another type and names them", () => {
    const leftOut: string[] = [];
    const json = write({ id: "1", name: "n", size: "1.5", at: "soon", kind: "c", done: 0 }, (field) =>
      leftOut.push(field),
    );
    expect(json).toBe('{"id":1,"name":"n","done":false}');
    expect(leftOut).toEqual(["size", "at", "kind"]);
  });

  it("omits absent optional values without naming them", () => {
    const leftOut: string[] = [];
    expect(
      write({ id: "1", name: "n", size: null, at: null, kind: null, done: 0 }, (field) => leftOut.push(field)),
    ).toBe('{"id":1,"name":"n","done":false}');
    expect(leftOut).toEqual([]);
  });

  it("refuses a required value of another type", () => {
    expect(() => write({ id: "x", name: "n", size: null, at: null, kind: null, done: 0 }, () => {})).toThrow(
      /id does not fit/,
    );
  });
});
