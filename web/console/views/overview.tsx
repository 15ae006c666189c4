import { useEffect } from "hono/jsx/dom";
import { call, messageOf } from "../../kit/api-client";
import type { Session } from "../../kit/api-types";
import { Notice, When } from "../../kit/parts";
import type { View } from "../console-view";
import { useLiveState } from "../../kit/live-state";

/** How often the remaining counts are read again (each read is a request the account counts). */
const REFRESH_MS = 10_000;

/** What is left of this minute and today, read again every few seconds. */
function Remaining({ first }: { first: Session }) {
  const [session, setSession] = useLiveState(first);
  const [error, setError] = useLiveState<string>();
  useEffect(() => {
    const timer = setInterval(async () => {
      try {
        setSession(await call<Session>("GET", "/console/session"));
        setError(undefined);
      } catch (failure) {
        setError(messageOf(failure));
      }
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  if (error) return <Notice text={error} kind="error" />;
  const { minute, day } = session.remaining;
  return (
    <dl class="remaining">
      <dt>Left this minute</dt>
      <dd>
        <strong data-remaining="minute">{String(minute.remaining)}</strong> of {session.limits.perMinute}, until{" "}
        <When iso={minute.resetAt} />
      </dd>
      <dt>Left today</dt>
      <dd>
        <strong data-remaining="day">{String(day.remaining)}</strong> of {session.limits.perDay}, until{" "}
        <When iso={day.resetAt} />
      </dd>
    </dl>
  );
}

/** The key, its limits, and what is left of this minute and today. */
function Overview({ session }: { session: Session }) {
  const { key } = session;
  return (
    <>
      <h1 tabindex={-1}>Overview</h1>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{key.name}</dd>
        <dt>Key</dt>
        <dd>
          <code>{key.start ? `${key.start}…` : "(made before prefixes were kept)"}</code> <code>{key.id}</code>
        </dd>
        <dt>Plan</dt>
        <dd>{key.plan}</dd>
        <dt>Limits</dt>
        <dd>{`${session.limits.perMinute} a minute, ${session.limits.perDay} a day`}</dd>
        <dt>Scopes</dt>
        <dd>{key.scopes.join(", ")}</dd>
        <dt>Key expires</dt>
        <dd>{key.expiresAt ? <When iso={key.expiresAt} /> : "never"}</dd>
        <dt>Session ends</dt>
        <dd>
          <When iso={session.session?.expiresAt} />
        </dd>
      </dl>
      <h2>Now</h2>
      <div>
        <Remaining first={session} />
      </div>
    </>
  );
}

export const OverviewView: View = ({ session }) => <Overview session={session} />;
