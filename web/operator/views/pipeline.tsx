import { useEffect, useRef } from "hono/jsx/dom";
import { messageOf } from "../../kit/api-client";
import { Notice, TableHead } from "../../kit/parts";
import { admin } from "../operator-api";
import type { OperatorView, PipelineHealth } from "../operator-api-types";
import { useLiveState } from "../../kit/live-state";

/** How often the figures are read again: the dispatcher's lag is seen moving as deliveries back up or drain. */
const REFRESH_MS = 2_000;

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The event pipeline (GET /admin/pipeline): events against their budget, the dispatcher's mark and lag. */
function Pipeline() {
  const [health, setHealth] = useLiveState<PipelineHealth>();
  const [error, setError] = useLiveState<string>();
  const timer = useRef<ReturnType<typeof setTimeout>>(null);
  /** The newest read's number (-1 once the view is left): only the newest read schedules the next, so one poll runs. */
  const newest = useRef(0);

  const read = async () => {
    clearTimeout(timer.current ?? undefined);
    const mine = ++newest.current;
    try {
      setHealth(await admin<PipelineHealth>("GET", "/pipeline"));
      setError(undefined);
    } catch (failure) {
      setError(messageOf(failure));
    }
    if (mine === newest.current) timer.current = setTimeout(read, REFRESH_MS);
  };
  useEffect(() => {
    void read();
    return () => {
      newest.current = -1;
      clearTimeout(timer.current ?? undefined);
    };
  }, []);

  return (
    <>
      <h1 tabindex={-1}>Pipeline</h1>
      <p>
        {"Order events from their capture to the webhook lanes. "}
        <button type="button" class="quiet" onClick={() => void read()}>
          Read now
        </button>
      </p>
      <div>{error && <Notice text={error} kind="error" />}</div>
      <div id="pipeline-figures">{health && <Figures health={health} />}</div>
    </>
  );
}

function Figures({ health }: { health: PipelineHealth }) {
  const { orderEvents: events, dispatcher, orderWrites, database, worker } = health;
  return (
    <>
      {health.warnings.length > 0 ? (
        <ul class="warnings" aria-label="Warnings">
          {health.warnings.map((warning) => (
            <li>
              <Notice text={warning} kind="error" />
            </li>
          ))}
        </ul>
      ) : (
        <Notice text="Nothing to act on." />
      )}
      <h2>The dispatcher</h2>
      <dl class="facts">
        <dt>Event head</dt>
        <dd id="pipeline-head">{events.head}</dd>
        <dt>Dispatcher's mark</dt>
        <dd id="pipeline-mark">{dispatcher.mark}</dd>
        <dt>Lag (events not yet handed out)</dt>
        <dd id="pipeline-lag">{dispatcher.lag}</dd>
        <dt>Lanes behind</dt>
        <dd>{dispatcher.lanesBehind}</dd>
        <dt>Order writes</dt>
        <dd>{orderWrites.heldSince ? `refused since ${orderWrites.heldSince}` : "accepted"}</dd>
        <dt>Worker version</dt>
        <dd id="pipeline-version">
          {worker.id ? (
            <code>
              {worker.id}
              {worker.tag ? ` (${worker.tag})` : ""}
            </code>
          ) : (
            "— (not deployed: npm start)"
          )}
        </dd>
      </dl>
      <h2>Storage</h2>
      <table>
        <caption>What the pipeline keeps, against its budget</caption>
        <TableHead titles={["Table", "Rows", "Size", "Budget", "Share"]} />
        <tbody>
          <tr>
            <td>order events</td>
            <td>{events.rows}</td>
            <td>{mib(events.bytes)}</td>
            <td>{mib(events.budgetBytes)}</td>
            <td>{`${(events.share * 100).toFixed(1)}%`}</td>
          </tr>
          <tr>
            <td>the orders database</td>
            <td>—</td>
            <td>{database.bytes === null ? "—" : mib(database.bytes)}</td>
            <td>10 GB</td>
            <td>{database.bytes === null ? "—" : `${((database.bytes / 10e9) * 100).toFixed(1)}%`}</td>
          </tr>
        </tbody>
      </table>
      <p class="hint">
        {`Events up to ${events.prunedThrough} are pruned: the feed answers 410 below it. Read again every ` +
          `${REFRESH_MS / 1000} s.`}
      </p>
    </>
  );
}

export const PipelineView: OperatorView = () => <Pipeline />;
