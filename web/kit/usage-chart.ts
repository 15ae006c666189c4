import { messageOf } from "./api-client";
import { timeChart } from "./time-chart";
import { h, notice, show } from "./dom";
import type { UsageHistory } from "./api-types";

type Granularity = UsageHistory["granularity"];

const BUCKET_SECONDS: Record<Granularity, number> = { minute: 60, hour: 3_600, day: 86_400 };
/** The ranges offered, in buckets, within what the history keeps (minutes and hours 48 hours, days 400). */
const RANGES: Record<Granularity, { buckets: number; label: string }[]> = {
  minute: [
    { buckets: 60, label: "Last hour" },
    { buckets: 360, label: "Last 6 hours" },
    { buckets: 1_440, label: "Last 24 hours" },
  ],
  hour: [
    { buckets: 24, label: "Last 24 hours" },
    { buckets: 48, label: "Last 48 hours" },
  ],
  day: [
    { buckets: 7, label: "Last 7 days" },
    { buckets: 30, label: "Last 30 days" },
    { buckets: 90, label: "Last 90 days" },
    { buckets: 400, label: "Last 400 days" },
  ],
};

/**
 * Admitted and refused per minute, hour or day, as the API answers them
 * (`load`, with the query's granularity and start): the chart (uPlot; the
 * numbers at the pointer in its legend) and the same buckets as a table.
 * Nothing is added up or filled in here. Both consoles draw it: the
 * callers' from `GET /v2/usage`, the operators' from a key's history.
 */
export function usageChart(load: (query: string, signal: AbortSignal) => Promise<UsageHistory>): {
  element: HTMLElement;
  stop: () => void;
} {
  const granularity = h(
    "select",
    { id: "usage-granularity" },
    ...(["minute", "hour", "day"] as const).map((g) => h("option", { value: g, selected: g === "hour" }, `Per ${g}`)),
  );
  const range = h("select", { id: "usage-range" });
  const chart = h("figure", { class: "chart", "aria-labelledby": "usage-caption" });
  const table = h("div", {});
  const status = h("div", {});
  const plot = timeChart(chart, "Requests", [
    { label: "Admitted", stroke: "#1b6e3a", fill: "rgba(27,110,58,0.12)" },
    { label: "Refused", stroke: "#b3261e" },
  ]);
  let abort = new AbortController();

  const fillRanges = () =>
    show(
      range,
      RANGES[granularity.value as Granularity].map(({ buckets, label }) => h("option", { value: buckets }, label)),
    );

  const draw = async () => {
    abort.abort();
    abort = new AbortController();
    const g = granularity.value as Granularity;
    const from = new Date(Date.now() - (Number(range.value) - 1) * BUCKET_SECONDS[g] * 1000).toISOString();
    show(status, h("p", { role: "status" }, "Loading…"));
    let history: UsageHistory;
    try {
      history = await load(`granularity=${g}&from=${encodeURIComponent(from)}`, abort.signal);
    } catch (error) {
      if ((error as Error).name !== "AbortError") show(status, notice(messageOf(error), "error"));
      return;
    }
    show(status);
    const { buckets } = history;
    plot.draw([
      buckets.map((b) => Date.parse(b.start) / 1000),
      buckets.map((b) => b.admitted),
      buckets.map((b) => b.refused),
    ]);
    chart.append(
      h(
        "figcaption",
        { id: "usage-caption" },
        `Admitted and refused requests per ${g}, ${buckets.length} buckets from ` +
          `${buckets[0]?.start ?? "—"}; point at ` +
          `` +
          `` +
          `the chart for the numbers.`,
      ),
    );
    show(
      table,
      h(
        "details",
        {},
        h("summary", {}, "The numbers"),
        h(
          "table",
          { id: "usage-table" },
          h("caption", {}, `Per ${g}, oldest first`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, "Bucket starting (UTC)"),
              h("th", { scope: "col" }, "Admitted"),
              h("th", { scope: "col" }, "Refused"),
            ),
          ),
          h(
            "tbody",
            {},
            buckets.map((b) => h("tr", {}, h("td", {}, b.start), h("td", {}, b.admitted), h("td", {}, b.refused))),
          ),
        ),
      ),
    );
  };

  granularity.addEventListener("change", () => {
    fillRanges();
    void draw();
  });
  range.addEventListener("change", () => void draw());

  fillRanges();
  void draw();
  return {
    element: h(
      "div",
      {},
      h(
        "div",
        { class: "controls" },
        h("label", { for: "usage-granularity" }, "Granularity"),
        granularity,
        h("label", { for: "usage-range" }, "Range"),
        range,
      ),
      status,
      chart,
      table,
    ),
    stop() {
      abort.abort();
      plot.stop();
    },
  };
}
