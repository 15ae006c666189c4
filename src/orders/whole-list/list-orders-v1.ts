import { defineOperation } from "../../framework/operations/define-operation";
import { readSession } from "../../lib/d1-session";
import { logLine } from "../../lib/log";
import { bookmarkHeader, bookmarkOf } from "../../read-your-writes/d1-bookmark";
import { orderListEtag, readOrderList } from "./read-order-list";
import { Order } from "../order-schemas";
import { startRead, type OwnWrites } from "../../read-your-writes/own-writes";
import type { VersionMemory } from "../../read-your-writes/recent-version";
import type { WholeFills } from "./order-list-cache";

/** `GET /store/orders`, with the isolate's version and cache memory. */
export const listOrders = (versions: VersionMemory, ownWrites: OwnWrites, fills: WholeFills) =>
  defineOperation({
    operationId: "listOrders",
    scope: "orders:read",
    method: "get",
    path: "/store/orders",
    summary: "List every order",
    tag: "Orders",
    description:
      "Every order placed in the store, ascending by id, as one JSON array. Filtering and pagination are not " +
      "supported in v1 (they are planned for v2). Revalidate with If-None-Match to get 304 when nothing changed. " +
      "Reads are served by the nearest D1 replica; send the X-D1-Bookmark of an earlier response (a cancel's) to " +
      "read data at least as new as that response saw.",
    stability: "stable",
    responses: {
      200: { description: "All orders", body: Order.array(), headers: ["ETag", "X-D1-Bookmark"] },
      304: {
        description:
          "Not Modified: an ETag in If-None-Match is the current list's. No body; keep using the list you hold.",
        headers: ["ETag", "X-D1-Bookmark"],
      },
    },
    requestHeaders: ["If-None-Match", "X-D1-Bookmark"],
    errors: ["invalid_bookmark", "order_list_too_large"],
    async handle(c) {
      const bookmark = bookmarkOf(c);
      const start = startRead(versions, ownWrites, bookmark, Date.now());
      const db = readSession(c.env.DB, start.floor);
      const requestId = c.get("requestId");
      const list = await readOrderList(
        { bookmark, ifNoneMatch: c.req.header("If-None-Match"), head: c.req.method === "HEAD", began: start.began },
        {
          db,
          config: c.get("config"),
          log: (level, message, fields) => logLine(level, requestId, message, fields),
          background: (work) => c.executionCtx.waitUntil(work),
          versions,
          fills,
        },
      );
      const headers = { ETag: orderListEtag(list.version), ...bookmarkHeader(db) };
      if (list.kind === "not-modified") return c.body(null, 304, headers);
      c.set("bodyBytes", list.bytes);
      return c.body(list.body, 200, { "Content-Type": "application/json", ...headers });
    },
  });
