import { messageOf } from "../../kit/api-client";
import { h, notice, show } from "../../kit/dom";
import { timeChart } from "../../kit/time-chart";
import { admin } from "../operator-api";
import type { OperatorView, Traffic } from "../operator-api-types";

const RANGES = [
  ["1h", "Last hour"],
  ["6h", "Last 6 hours"],
  ["24h", "Last 24 hours"],
  ["7d", "Last 7 days"],
] as const;

const cells = (...values: (string | number | HTMLElement)[]) =>
  h(
    "tr",
    {},
    values.map((value) => h("td", {}, value)),
  );
const accountLink = (budget: string) => h("a", { href: `#/budget/${budget}` }, h("code", {}, budget));
const table = (caption: string, headings: string[], rows: HTMLElement[], empty: string) =>
  rows.length === 0
    ? h("p", { class: "hint" }, empty)
    : h(
        "table",
        {},
        h("caption", {}, caption),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            headings.map((heading) => h("th", { scope: "col" }, heading)),
          ),
        ),
        h("tbody", {}, rows),
      );

/**
 * Every account's traffic (GET /admin/traffic, read from the request
 * analytics): requests by outcome over a range, the top accounts by requests
 * and by refusals, the bans refusing now, keyless refusals by address group.
 */
export const trafficView: OperatorView = (root) => {
  const range = h(
    "select",
    { id: "traffic-range" },
    RANGES.map(([value, label]) => h("option", { value }, label)),
  );
  const chart = h("figure", { class: "chart", "aria-labelledby": "traffic-caption" });
  const figures = h("div", { id: "traffic-figures" });
  const status = h("div", {});
  const plot = timeChart(chart, "Requests a minute", [
    { label: "Admitted", stroke: "#1b6e3a", fill: "rgba(27,110,58,0.12)" },
    { label: "Refused by the limiter", stroke: "#b3261e" },
    { label: "Without a valid key", stroke: "#6b4f00", dash: [6, 4] },
    { label: "Errors", stroke: "#3c3c3c", dash: [2, 3] },
  ]);
  let abort = new AbortController();

  const draw = async () => {
    abort.abort();
    abort = new AbortController();
    show(status, h("p", { role: "status" }, "Loading…"));
    let traffic: Traffic;
    try {
      traffic = await admin<Traffic>("GET", `/traffic?range=${range.value}`, { signal: abort.signal });
    } catch (error) {
      if ((error as Error).name !== "AbortError") show(status, notice(messageOf(error), "error"));
      return;
    }
    show(status);
    const { series } = traffic;
    const perMinute = traffic.bucketSeconds / 60;
    plot.draw([
      series.map((b) => Date.parse(b.start) / 1000),
      series.map((b) => b.admitted / perMinute),
      series.map((b) => (b.limited + b.banned) / perMinute),
      series.map((b) => b.unauthenticated / perMinute),
      series.map((b) => b.error / perMinute),
    ]);
    chart.append(
      h(
        "figcaption",
        { id: "traffic-caption" },
        `Requests a minute across every account and caller, averaged over ` +
          `${perMinute === 1 ? "each minute" : `${perMinute} minutes`}, from ${series[0]?.start ?? "—"}; ` +
          "point at the chart for the numbers.",
      ),
    );
    const sum = (pick: (b: Traffic["series"][number]) => number) => series.reduce((total, b) => total + pick(b), 0);
    show(
      figures,
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Admitted"),
        h(
          "dd",
          { id: "traffic-admitted" },
          sum((b) => b.admitted),
        ),
        h("dt", {}, "Refused by the limiter"),
        h(
          "dd",
          { id: "traffic-refused" },
          sum((b) => b.limited + b.banned),
        ),
        h("dt", {}, "Without a valid key (401)"),
        h(
          "dd",
          {},
          sum((b) => b.unauthenticated),
        ),
        h("dt", {}, "Errors (5xx)"),
        h(
          "dd",
          {},
          sum((b) => b.error),
        ),
      ),
      h("h2", {}, "Bans refusing now"),
      table(
        "Accounts and address groups refused as banned in the last 5 minutes",
        ["Caller", "Refused", "Last refused (UTC)"],
        traffic.bans.map((ban) =>
          cells(
            ban.caller.startsWith("ip:") ? h("code", {}, ban.caller.slice(3)) : accountLink(ban.caller),
            ban.refused,
            ban.lastRefusedAt,
          ),
        ),
        "No ban refused anyone in the last 5 minutes.",
      ),
      h("h2", {}, "Top accounts"),
      table(
        "By requests",
        ["Account", "Requests", "Refused"],
        traffic.topByRequests.map((b) => cells(accountLink(b.budget), b.requests, b.refused)),
        "No account sent a request in this range.",
      ),
      table(
        "By refusals",
        ["Account", "Refused", "Requests"],
        traffic.topByRefusals.map((b) => cells(accountLink(b.budget), b.refused, b.requests)),
        "No account was refused in this range.",
      ),
      h("h2", {}, "Callers without a key, by address group"),
      table(
        "Address groups (an IPv4 address, an IPv6 /64) refused by their limit",
        ["Address group", "Refused", "Requests"],
        traffic.keyless.map((g) => cells(h("code", {}, g.addressGroup), g.refused, g.requests)),
        "No caller without a key was refused in this range.",
      ),
      h(
        "p",
        { class: "hint" },
        `From the request analytics (dataset ${traffic.dataset}), which sample at high volume: counts are weighted ` +
          `estimates.`,
      ),
    );
  };

  range.addEventListener("change", () => void draw());
  show(
    root,
    h("h1", { tabindex: -1 }, "Traffic"),
    h("div", { class: "controls" }, h("label", { for: "traffic-range" }, "Range"), range),
    status,
    chart,
    figures,
  );
  void draw();
  return () => {
    abort.abort();
    plot.stop();
  };
};
