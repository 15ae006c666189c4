import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import { replays } from "../../../src/webhook-delivery/lane-replays";
import { logCursor } from "../../../src/webhook-delivery/lane-log";
import { LANE_CONCURRENCY } from "../../../src/webhook-delivery/lane-pacing";
import { FLUSH_EVERY } from "../../../src/webhook-delivery/lane-run";
import {
  laneDeliveries,
  pendingDeliveries,
  receivers,
  replaying,
  runLaneOnce,
  silentReceiver,
  webhookOwnerOfEachTest,
} from "../../support/webhook-fixtures";

/**
 * A lane that dies mid-run (docs/design/order-events.md#faults): what it had flushed to its log stands, what it had
 * POSTed and not flushed is POSTed again by the next run, and nothing is lost. The death is injected in its storage:
 * once `standing` flushes are written, the next flush, or the `later`th statement after them, fails, and every one
 * after, as none runs in an object that is gone. And a first try that hangs holds what the lane starts past it.
 */
const owner = webhookOwnerOfEachTest();

/** Writes of the log's block: a flush. */
const FLUSH = /delivery_log (\(after|SET through)/;

async function runDying(
  endpointId: string,
  death: { standing: number; later: number },
  fetch: typeof globalThis.fetch,
  flush = FLUSH,
) {
  const outcome = await runLaneOnce(endpointId, (state) => {
    const sql = state.storage.sql;
    let flushes = 0;
    let after = 0;
    let dead = false;
    let flushing = false;
    const dying = {
      exec(query: string, ...bindings: unknown[]) {
        if (flushes === death.standing && (flush.test(query) || (!flushing && ++after >= death.later))) dead = true;
        if (dead) throw new Error("the object was reset");
        if (flush.test(query)) flushes += 1;
        return sql.exec(query, ...(bindings as SqlStorageValue[]));
      },
    } as unknown as SqlStorage;
    // A statement after a flush is one after its transaction.
    const transactionSync = <T>(closure: () => T): T => {
      flushing = true;
      try {
        return state.storage.transactionSync(closure);
      } finally {
        flushing = false;
      }
    };
    return { sql: dying, fetch, transactionSync, accountLiveness: async () => "live" };
  }).then(
    () => "ran",
    (error: unknown) => String(error),
  );
  // What stood: a flush the death cut short is written not at all.
  const cursor = await runInDurableObject(laneOf(env, endpointId), (_, state) => logCursor(state.storage.sql));
  return { outcome, cursor };
}

describe("a lane that dies mid-run", () => {
  it.each([
    ["at its first flush, before any of its POSTs is recorded", { standing: 0, later: Number.POSITIVE_INFINITY }],
    ["between two flushes, its next POSTs under way", { standing: 1, later: 1 }],
    ["at its last flush, after every POST", { standing: 2, later: Number.POSITIVE_INFINITY }],
  ])("%s: the next run sends again only what was not flushed, and every event arrives", async (_, death) => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 120 }, (_, index) => 3_000 + index),
    );
    const { fetch, posts } = receivers(() => scheduler.wait(1).then(() => new Response(null, { status: 204 })));
    const died = await runDying(endpointId, death, fetch);
    expect(died.outcome).toBe("Error: the object was reset");
    const beforeCrash = posts.map((post) => Number(post.webhookId.slice("evt_".length)));
    const flushed = died.cursor ?? seqs[0]! - 1;

    const { fetch: again, posts: resent } = receivers();
    await runDying(endpointId, { standing: Number.POSITIVE_INFINITY, later: Number.POSITIVE_INFINITY }, again);
    const sentAgain = resent.map((post) => Number(post.webhookId.slice("evt_".length)));

    // Every event arrived, in one run or the other.
    expect(new Set([...beforeCrash, ...sentAgain])).toEqual(new Set(seqs));
    // What was sent twice is exactly what was POSTed after the last flush that stood.
    const twice = beforeCrash.filter((seq) => sentAgain.includes(seq)).sort((a, b) => a - b);
    expect(twice).toEqual(beforeCrash.filter((seq) => seq > flushed).sort((a, b) => a - b));
    expect(twice.length).toBeLessThanOrEqual(FLUSH_EVERY + LANE_CONCURRENCY);
    if (death.standing > 0) expect(flushed).toBeGreaterThanOrEqual(seqs[0]!);
    expect((await laneDeliveries(endpointId)).map((row) => [row.seq, row.outcome])).toEqual(
      seqs.map((seq) => [seq, "delivered"]),
    );
  });
});

describe("a lane that fails as it settles its retried rows", () => {
  it.each([
    [
      "dies at their delete",
      3_500,
      (query: string) => query.startsWith("DELETE FROM pending_deliveries WHERE seq = ?"),
    ],
    // Taken from the pending table, then the log's write refused (a full database, say): the flush is undone whole.
    ["has the log's write refused after their delete", 3_600, (query: string) => FLUSH.test(query)],
  ])(
    "%s: keeps them pending; the next run sends each again, once, and every one is delivered",
    async (_, first, fails) => {
      const { endpointId, seqs } = await pendingDeliveries(
        owner.key,
        Array.from({ length: 12 }, (_, index) => first + index),
      );
      let clock = Date.now();
      await runLaneOnce(endpointId, {
        fetch: receivers(() => new Response(null, { status: 503 })).fetch,
        now: () => clock,
      });
      expect((await laneDeliveries(endpointId)).every((row) => row.outcome === "pending" && row.attempts === 1)).toBe(
        true,
      );
      clock += 60_000;
      const { fetch, posts } = receivers();
      // Taken at their retry, the lane fails at the flush that would move them to the settled log.
      const failed = await runLaneOnce(endpointId, (state) => ({
        fetch,
        now: () => clock,
        sql: {
          exec(query: string, ...bindings: SqlStorageValue[]) {
            if (fails(query)) throw new Error("the statement failed");
            return state.storage.sql.exec(query, ...bindings);
          },
        } as unknown as SqlStorage,
      })).then(
        () => "ran",
        (error: unknown) => String(error),
      );
      expect(failed).toBe("Error: the statement failed");
      expect(posts.map((post) => post.webhookId).sort()).toEqual(seqs.map((seq) => `evt_${seq}`).sort());
      const kept = await laneDeliveries(endpointId);
      expect(kept.map((row) => [row.outcome, row.attempts])).toEqual(seqs.map(() => ["pending", 1]));

      const { fetch: again, posts: resent } = receivers();
      await runLaneOnce(endpointId, { fetch: again, now: () => clock });
      expect(resent.map((post) => post.webhookId).sort()).toEqual(seqs.map((seq) => `evt_${seq}`).sort());
      const rows = await laneDeliveries(endpointId);
      expect(rows.map((row) => [row.outcome, row.attempts])).toEqual(seqs.map(() => ["delivered", 2]));
    },
  );
});

describe("a lane whose flush fails once mid-run", () => {
  it("holds what it had for the run's last flush: every event logged delivered, none sent twice", async () => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 120 }, (_, index) => 3_800 + index),
    );
    const { fetch, posts } = receivers();
    let refused = false;
    const failed = await runLaneOnce(endpointId, (state) => ({
      fetch,
      sql: {
        exec(query: string, ...bindings: SqlStorageValue[]) {
          if (FLUSH.test(query) && !refused) {
            refused = true;
            throw new Error("SQLITE_BUSY");
          }
          return state.storage.sql.exec(query, ...bindings);
        },
      } as unknown as SqlStorage,
    })).then(
      () => "ran",
      (error: unknown) => String(error),
    );
    expect(failed).toBe("Error: SQLITE_BUSY");
    const sent = posts.map((post) => Number(post.webhookId.slice("evt_".length)));
    expect(new Set(sent).size).toBe(sent.length);
    const logged = (await laneDeliveries(endpointId)).filter((row) => row.outcome === "delivered");
    expect(logged.map((row) => row.seq).sort((a, b) => a - b)).toEqual([...sent].sort((a, b) => a - b));
    expect(sent.length).toBeLessThan(seqs.length);
  });
});

describe("a lane that fails everything pending (its endpoint disabled) as its log's write fails", () => {
  it("keeps its rows, attempts and all, for the next run to settle with them", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [6_100, 6_101, 6_102]);
    const clock = Date.now();
    await runLaneOnce(endpointId, {
      fetch: receivers(() => new Response(null, { status: 503 })).fetch,
      now: () => clock,
    });
    await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
      .bind(endpointId)
      .run();
    const failed = await runDying(endpointId, { standing: 0, later: Number.POSITIVE_INFINITY }, receivers().fetch);
    expect(failed.outcome).toBe("Error: the object was reset");
    const kept = await laneDeliveries(endpointId);
    expect(kept.map((row) => [row.seq, row.outcome, row.attempts])).toEqual(seqs.map((seq) => [seq, "pending", 1]));
    await runLaneOnce(endpointId, { fetch: receivers().fetch, now: () => clock + 200 });
    const settled = await laneDeliveries(endpointId);
    expect(settled.map((row) => [row.seq, row.outcome, row.attempts, row.attempt_log.length])).toEqual(
      seqs.map((seq) => [seq, "failed", 1, 1]),
    );
  });
});

describe("a lane that dies as it replays a recovered range", () => {
  it("sends again only what the replay had not recorded: every event arrives, each settled delivered once", async () => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 120 }, (_, index) => 3_700 + index),
    );
    await replaying(endpointId, seqs[0]!, seqs.at(-1)!);
    // Answers that take a while, so a flush finds tries open and read past them.
    const { fetch, posts } = receivers(() => scheduler.wait(1).then(() => new Response(null, { status: 204 })));
    // It dies at its second flush: the first stands.
    const died = await runDying(endpointId, { standing: 1, later: Number.POSITIVE_INFINITY }, fetch);
    expect(died.outcome).toBe("Error: the object was reset");
    const beforeCrash = posts.map((post) => Number(post.webhookId.slice("evt_".length)));
    const stood = await runInDurableObject(laneOf(env, endpointId), (_, state) => replays(state.storage.sql));
    const recorded = stood[0]!.after;
    expect(recorded).toBeGreaterThanOrEqual(seqs[0]!);

    const { fetch: again, posts: resent } = receivers();
    await runDying(endpointId, { standing: Number.POSITIVE_INFINITY, later: Number.POSITIVE_INFINITY }, again);
    const sentAgain = resent.map((post) => Number(post.webhookId.slice("evt_".length)));
    expect(new Set([...beforeCrash, ...sentAgain])).toEqual(new Set(seqs));
    const twice = beforeCrash.filter((seq) => sentAgain.includes(seq)).sort((a, b) => a - b);
    expect(twice).toEqual(beforeCrash.filter((seq) => seq > recorded).sort((a, b) => a - b));
    expect(twice.length).toBeLessThanOrEqual(FLUSH_EVERY + LANE_CONCURRENCY);
    const settled = await laneDeliveries(endpointId);
    expect(settled.map((row) => [row.seq, row.outcome, row.attempts])).toEqual(
      seqs.map((seq) => [seq, "delivered", 1]),
    );
    expect(await runInDurableObject(laneOf(env, endpointId), (_, state) => replays(state.storage.sql))).toEqual([]);
  });
});

describe("a replay's last event in flight", () => {
  it("keeps the replay while it is: a flush of what came after it does not end the replay", async () => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 63 }, (_, index) => 9_000 + index),
    );
    const last = seqs[2]!;
    await replaying(endpointId, seqs[0]!, last);
    let whileInFlight: number | undefined;
    await runLaneOnce(endpointId, (state) => {
      const { sql } = state.storage;
      const { fetch } = receivers();
      const holding = (async (url: string, init: RequestInit) => {
        if (new Headers(init.headers).get("webhook-id") === `evt_${last}`) {
          // Held until the feed's events after it were flushed (or 3 s).
          for (let wait = 0; wait < 300 && (logCursor(sql) ?? 0) <= last; wait++) await scheduler.wait(10);
          whileInFlight = replays(sql).length;
        }
        return fetch(url, init);
      }) as typeof globalThis.fetch;
      return { fetch: holding };
    });
    expect(whileInFlight).toBe(1);
    const rows = await laneDeliveries(endpointId);
    expect(rows.map((row) => [row.seq, row.outcome, row.attempts])).toEqual(seqs.map((seq) => [seq, "delivered", 1]));
    expect(await runInDurableObject(laneOf(env, endpointId), (_, state) => replays(state.storage.sql))).toEqual([]);
  });
});

describe("a lane whose first try hangs", () => {
  it("starts no more than FLUSH_EVERY answers past it, so a death would re-send at most those and the six in flight", async () => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 200 }, (_, index) => 4_000 + index),
    );
    let startedWhileHanging = 0;
    const { fetch, posts } = receivers((url, signal) => {
      if (posts.length > 1) return new Response(null, { status: 204 });
      // The first POST hangs until its own timeout: how many had started by then is what a death would re-send.
      signal?.addEventListener("abort", () => void (startedWhileHanging = posts.length));
      return silentReceiver(url, signal);
    });
    await runLaneOnce(endpointId, { fetch, timeoutMs: 300 });
    expect(startedWhileHanging).toBeGreaterThan(FLUSH_EVERY);
    expect(startedWhileHanging).toBeLessThanOrEqual(FLUSH_EVERY + LANE_CONCURRENCY);
    expect(new Set(posts.map((post) => post.webhookId)).size).toBe(seqs.length);
  });
});
