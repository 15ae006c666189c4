import { call } from "../../kit/api-client";
import { h, show } from "../../kit/dom";
import type { UsageHistory } from "../../kit/api-types";
import type { View } from "../console-view";
import { usageChart } from "../../kit/usage-chart";

export const usageView: View = (root) => {
  const chart = usageChart((query, signal) => call<UsageHistory>("GET", `/usage?${query}`, { signal }));
  show(
    root,
    h("h1", { tabindex: -1 }, "Usage"),
    h("p", {}, "What the limiter admitted and refused for this key's account, exactly as it decided."),
    chart.element,
  );
  return chart.stop;
};
