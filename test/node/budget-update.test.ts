import { describe, expect, it } from "vitest";
import { budgetUpdate } from "../../scripts/lib/budget-update";
import type { ApiKeyRecord } from "../../src/keys/api-key-record";

const record = (id: string, fields: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  plan: "business",
  name: id,
  createdAt: "2030-01-01T00:00:00.000Z",
  ...fields,
});

describe("keys update of a rotated pair", () => {
  const old = {
    hash: "a".repeat(64),
    record: record("key_aaaaaaaaaaaaaaaa", {
      expiresAt: "2030-01-02T00:00:00.000Z",
      limits: { perMinute: 5, perDay: 50 },
    }),
  };
  const rotated = {
    hash: "b".repeat(64),
    record: record("key_bbbbbbbbbbbbbbbb", { budget: "key_aaaaaaaaaaaaaaaa", limits: { perMinute: 5, perDay: 50 } }),
  };
  const changes = {
    plan: "free" as const,
    limits: undefined,
    limitsSetAt: "2030-01-01T12:00:00.000Z",
    name: "renamed",
  };

  it("gives every key of the budget the new plan, limits and stamp, and the name only to the key named", () => {
    const { records } = budgetUpdate(rotated, [old], changes);
    expect(records.map(({ hash }) => hash)).toEqual([rotated.hash, old.hash]);
    for (const { record: updated } of records) {
      expect(updated).toMatchObject({ plan: "free", limitsSetAt: changes.limitsSetAt });
      expect(updated).not.toHaveProperty("limits");
    }
    expect(records[0]!.record.name).toBe("renamed");
    expect(records[1]!.record).toMatchObject({ name: old.record.name, expiresAt: old.record.expiresAt });
  });

  it("writes one audit row per key reached, each naming every key reached", () => {
    const { events } = budgetUpdate(rotated, [old], changes);
    const reached = [rotated.record.id, old.record.id];
    expect(events).toEqual([
      { operation: "update", keyId: rotated.record.id, changes: { ...changes, reached } },
      {
        operation: "update",
        keyId: old.record.id,
        changes: { plan: "free", limits: undefined, limitsSetAt: changes.limitsSetAt, reached },
      },
    ]);
  });

  it("reaches only the key named when nothing of the budget changes", () => {
    const { records, events } = budgetUpdate(old, [], { name: "just a name" });
    expect(records).toHaveLength(1);
    expect(events).toEqual([{ operation: "update", keyId: old.record.id, changes: { name: "just a name" } }]);
  });
});
