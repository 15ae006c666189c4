import type { Child } from "hono/jsx/dom";
import { useMemo } from "hono/jsx/dom";
import { LoadStatus, useLoaded } from "../../kit/loaded";
import { TableHead } from "../../kit/parts";
import { type AlignedData, TimeChart } from "../../kit/time-chart";
import { admin } from "../operator-api";
import type { OperatorView, Traffic } from "../operator-api-types";
import { useLiveState } from "../../kit/live-state";

const RANGES = [
  ["1h", "Last hour"],
  ["6h", "Last 6 hours"],
  ["24h", "Last 24 hours"],
  ["7d", "Last 7 days"],
] as const;

const LINES = [
  { label: "Admitted", stroke: "#1b6e3a", fill: "rgba(27,110,58,0.12)" },
  { label: "Refused by the limiter", stroke: "#b3261e" },
  { label: "Without a valid key", stroke: "#6b4f00", dash: [6, 4] },
  { label: "Errors", stroke: "#3c3c3c", dash: [2, 3] },
];

type Bucket = Traffic["series"][number];

const AccountLink = ({ budget }: { budget: string }) => (
  <a href={`#/budget/${budget}`}>
    <code>{budget}</code>
  </a>
);

/** A table of rows of cells, or a line saying there are none. */
const Table = ({
  caption,
  headings,
  rows,
  empty,
}: {
  caption: string;
  headings: string[];
  rows: Child[][];
  empty: string;
}) =>
  rows.length === 0 ? (
    <p class="hint">{empty}</p>
  ) : (
    <table>
      <caption>{caption}</caption>
      <TableHead titles={headings} />
      <tbody>
        {rows.map((cells) => (
          <tr>
            {cells.map((cell) => (
              <td>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );

/**
 * Every account's traffic (GET /admin/traffic, read from the request analytics): requests by outcome over a range,
 * the top accounts by requests and by refusals, the bans refusing now, keyless refusals by address group.
 */
function TrafficPage() {
  const [range, setRange] = useLiveState<string>(RANGES[0][0]);
  const loaded = useLoaded((signal) => admin<Traffic>("GET", `/traffic?range=${range}`, { signal }), [range]);
  const traffic = loaded.kind === "shown" ? loaded.value : undefined;
  const perMinute = traffic ? traffic.bucketSeconds / 60 : 1;
  const data = useMemo((): AlignedData | undefined => {
    if (!traffic) return undefined;
    const each = (pick: (b: Bucket) => number) => traffic.series.map(pick);
    return [
      each((b) => Date.parse(b.start) / 1000),
      each((b) => b.admitted / perMinute),
      each((b) => (b.limited + b.banned) / perMinute),
      each((b) => b.unauthenticated / perMinute),
      each((b) => b.error / perMinute),
    ];
  }, [traffic]);

  return (
    <>
      <h1 tabindex={-1}>Traffic</h1>
      <div class="controls">
        <label for="traffic-range">Range</label>
        <select id="traffic-range" onChange={(event) => setRange((event.target as HTMLSelectElement).value)}>
          {RANGES.map(([value, label]) => (
            <option value={value}>{label}</option>
          ))}
        </select>
      </div>
      <LoadStatus loaded={loaded} />
      <TimeChart
        yLabel="Requests a minute"
        lines={LINES}
        data={data}
        captionId="traffic-caption"
        caption={
          traffic &&
          "Requests a minute across every account and caller, averaged over " +
            `${perMinute === 1 ? "each minute" : `${perMinute} minutes`}, from ${traffic.series[0]?.start ?? "—"}; ` +
            "point at the chart for the numbers."
        }
      />
      <div id="traffic-figures">{traffic && <Figures traffic={traffic} />}</div>
    </>
  );
}

function Figures({ traffic }: { traffic: Traffic }) {
  const sum = (pick: (b: Bucket) => number) => traffic.series.reduce((total, b) => total + pick(b), 0);
  return (
    <>
      <dl class="facts">
        <dt>Admitted</dt>
        <dd id="traffic-admitted">{sum((b) => b.admitted)}</dd>
        <dt>Refused by the limiter</dt>
        <dd id="traffic-refused">{sum((b) => b.limited + b.banned)}</dd>
        <dt>Without a valid key (401)</dt>
        <dd>{sum((b) => b.unauthenticated)}</dd>
        <dt>Errors (5xx)</dt>
        <dd>{sum((b) => b.error)}</dd>
      </dl>
      <h2>Bans refusing now</h2>
      <Table
        caption="Accounts and address groups refused as banned in the last 5 minutes"
        headings={["Caller", "Refused", "Last refused (UTC)"]}
        rows={traffic.bans.map((ban) => [
          ban.caller.startsWith("ip:") ? <code>{ban.caller.slice(3)}</code> : <AccountLink budget={ban.caller} />,
          ban.refused,
          ban.lastRefusedAt,
        ])}
        empty="No ban refused anyone in the last 5 minutes."
      />
      <h2>Top accounts</h2>
      <Table
        caption="By requests"
        headings={["Account", "Requests", "Refused"]}
        rows={traffic.topByRequests.map((b) => [<AccountLink budget={b.budget} />, b.requests, b.refused])}
        empty="No account sent a request in this range."
      />
      <Table
        caption="By refusals"
        headings={["Account", "Refused", "Requests"]}
        rows={traffic.topByRefusals.map((b) => [<AccountLink budget={b.budget} />, b.refused, b.requests])}
        empty="No account was refused in this range."
      />
      <h2>Callers without a key, by address group</h2>
      <Table
        caption="Address groups (an IPv4 address, an IPv6 /64) refused by their limit"
        headings={["Address group", "Refused", "Requests"]}
        rows={traffic.keyless.map((g) => [<code>{g.addressGroup}</code>, g.refused, g.requests])}
        empty="No caller without a key was refused in this range."
      />
      <p class="hint">
        {`From the request analytics (dataset ${traffic.dataset}), which sample at high volume: counts are weighted ` +
          "estimates."}
      </p>
    </>
  );
}

export const TrafficView: OperatorView = () => <TrafficPage />;
