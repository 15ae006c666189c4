import { useMemo } from "hono/jsx/dom";
import type { UsageHistory } from "./api-types";
import { LoadStatus, useLoaded } from "./loaded";
import { TableHead } from "./parts";
import { type AlignedData, TimeChart } from "./time-chart";
import { useLiveState } from "./live-state";

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

const LINES = [
  { label: "Admitted", stroke: "#1b6e3a", fill: "rgba(27,110,58,0.12)" },
  { label: "Refused", stroke: "#b3261e" },
];

/**
 * Admitted and refused per minute, hour or day as the API answers them (`load`), in a chart (uPlot, the numbers at
 * the pointer in its legend) and a table; nothing is added up or filled in here. Both consoles show it.
 */
export function UsageChart({ load }: { load: (query: string, signal: AbortSignal) => Promise<UsageHistory> }) {
  const [granularity, setGranularity] = useLiveState<Granularity>("hour");
  const [buckets, setBuckets] = useLiveState(RANGES.hour[0]!.buckets);
  const loaded = useLoaded(
    (signal) => {
      const from = new Date(Date.now() - (buckets - 1) * BUCKET_SECONDS[granularity] * 1000).toISOString();
      return load(`granularity=${granularity}&from=${encodeURIComponent(from)}`, signal);
    },
    [granularity, buckets],
  );
  const shown = loaded.kind === "shown" ? loaded.value.buckets : undefined;
  // One array per answer: the chart is drawn again only for a new one.
  const data = useMemo(
    (): AlignedData | undefined =>
      shown && [
        shown.map((b) => Date.parse(b.start) / 1000),
        shown.map((b) => b.admitted),
        shown.map((b) => b.refused),
      ],
    [shown],
  );
  return (
    <div>
      <div class="controls">
        <label for="usage-granularity">Granularity</label>
        <select
          id="usage-granularity"
          onChange={(event) => {
            const chosen = (event.target as HTMLSelectElement).value as Granularity;
            setGranularity(chosen);
            setBuckets(RANGES[chosen][0]!.buckets);
          }}
        >
          {(["minute", "hour", "day"] as const).map((g) => (
            <option value={g} selected={g === granularity}>{`Per ${g}`}</option>
          ))}
        </select>
        <label for="usage-range">Range</label>
        <select id="usage-range" onChange={(event) => setBuckets(Number((event.target as HTMLSelectElement).value))}>
          {RANGES[granularity].map((range) => (
            <option value={String(range.buckets)} selected={range.buckets === buckets}>
              {range.label}
            </option>
          ))}
        </select>
      </div>
      <LoadStatus loaded={loaded} />
      <TimeChart
        yLabel="Requests"
        lines={LINES}
        data={data}
        captionId="usage-caption"
        caption={
          shown &&
          `Admitted and refused requests per ${granularity}, ${shown.length} buckets from ` +
            `${shown[0]?.start ?? "—"}; point at the chart for the numbers.`
        }
      />
      <div>
        {shown && (
          <details>
            <summary>The numbers</summary>
            <table id="usage-table">
              <caption>{`Per ${granularity}, oldest first`}</caption>
              <TableHead titles={["Bucket starting (UTC)", "Admitted", "Refused"]} />
              <tbody>
                {shown.map((b) => (
                  <tr>
                    <td>{b.start}</td>
                    <td>{b.admitted}</td>
                    <td>{b.refused}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        )}
      </div>
    </div>
  );
}
