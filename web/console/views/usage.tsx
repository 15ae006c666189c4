import { call } from "../../kit/api-client";
import type { UsageHistory } from "../../kit/api-types";
import { UsageChart } from "../../kit/usage-chart";
import type { View } from "../console-view";

const load = (query: string, signal: AbortSignal) => call<UsageHistory>("GET", `/usage?${query}`, { signal });

export const UsageView: View = () => (
  <>
    <h1 tabindex={-1}>Usage</h1>
    <p>What the limiter admitted and refused for this key's account, exactly as it decided.</p>
    <UsageChart load={load} />
  </>
);
