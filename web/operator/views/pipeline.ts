import { messageOf } from "../../kit/api-client";
import { h, notice, show } from "../../kit/dom";
import { admin } from "../operator-api";
import type { OperatorView, PipelineHealth } from "../operator-api-types";

/** How often the figures are read again: the dispatcher's lag is seen moving as deliveries back up or drain. */
const REFRESH_MS = 2_000;

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * The event pipeline (GET /admin/pipeline): the events against their budget, the dispatcher's mark and lag, what to act
 * on.
 */
export const pipelineView: OperatorView = (root) => {
  const figures = h("div", { id: "pipeline-figures" });
  const status = h("div", {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const read = async () => {
    try {
      const health = await admin<PipelineHealth>("GET", "/pipeline");
      show(status);
      const { orderEvents: events, dispatcher, orderWrites, database } = health;
      show(
        figures,
        health.warnings.length > 0
          ? h(
              "ul",
              { class: "warnings", "aria-label": "Warnings" },
              health.warnings.map((warning) => h("li", {}, notice(warning, "error"))),
            )
          : notice("Nothing to act on."),
        h("h2", {}, "The dispatcher"),
        h(
          "dl",
          { class: "facts" },
          h("dt", {}, "Event head"),
          h("dd", { id: "pipeline-head" }, events.head),
          h("dt", {}, "Dispatcher's mark"),
          h("dd", { id: "pipeline-mark" }, dispatcher.mark),
          h("dt", {}, "Lag (events not yet handed out)"),
          h("dd", { id: "pipeline-lag" }, dispatcher.lag),
          h("dt", {}, "Lanes behind"),
          h("dd", {}, dispatcher.lanesBehind),
          h("dt", {}, "Order writes"),
          h("dd", {}, orderWrites.heldSince ? `refused since ${orderWrites.heldSince}` : "accepted"),
          h("dt", {}, "Worker version"),
          h(
            "dd",
            { id: "pipeline-version" },
            health.worker.id
              ? h("code", {}, health.worker.id, health.worker.tag ? ` (${health.worker.tag})` : "")
              : "— (not deployed: npm start)",
          ),
        ),
        h("h2", {}, "Storage"),
        h(
          "table",
          {},
          h("caption", {}, "What the pipeline keeps, against its budget"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, "Table"),
              h("th", { scope: "col" }, "Rows"),
              h("th", { scope: "col" }, "Size"),
              h("th", { scope: "col" }, "Budget"),
              h("th", { scope: "col" }, "Share"),
            ),
          ),
          h(
            "tbody",
            {},
            h(
              "tr",
              {},
              h("td", {}, "order events"),
              h("td", {}, events.rows),
              h("td", {}, mib(events.bytes)),
              h("td", {}, mib(events.budgetBytes)),
              h("td", {}, `${(events.share * 100).toFixed(1)}%`),
            ),
            h(
              "tr",
              {},
              h("td", {}, "the orders database"),
              h("td", {}, "—"),
              h("td", {}, database.bytes === null ? "—" : mib(database.bytes)),
              h("td", {}, "10 GB"),
              h("td", {}, database.bytes === null ? "—" : `${((database.bytes / 10e9) * 100).toFixed(1)}%`),
            ),
          ),
        ),
        h(
          "p",
          { class: "hint" },
          `Events up to ${events.prunedThrough} are pruned: the feed answers 410 below it. Read again every ` +
            `${REFRESH_MS / 1000} s.`,
        ),
      );
    } catch (error) {
      show(status, notice(messageOf(error), "error"));
    }
    if (!stopped) timer = setTimeout(read, REFRESH_MS);
  };

  const readNow = h(
    "button",
    {
      type: "button",
      class: "quiet",
      onclick: () => {
        clearTimeout(timer);
        void read();
      },
    },
    "Read now",
  );
  show(
    root,
    h("h1", { tabindex: -1 }, "Pipeline"),
    h("p", {}, "Order events from their capture to the webhook lanes. ", readNow),
    status,
    figures,
  );
  void read();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
};
