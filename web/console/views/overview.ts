import { call, messageOf } from "../../kit/api-client";
import { h, notice, show, when } from "../../kit/dom";
import type { Session } from "../../kit/api-types";
import type { View } from "../console-view";

/**
 * How often the remaining counts are read again while the overview is shown (each read is a request the
 * account counts).
 */
const REFRESH_MS = 10_000;

const row = (term: string, ...value: (Node | string)[]) => [h("dt", {}, term), h("dd", {}, ...value)];

/** The key, its limits, and what is left of this minute and today, read again every few seconds. */
export const overviewView: View = (root, first) => {
  const remaining = h("div", {});
  const drawRemaining = (session: Session) =>
    show(
      remaining,
      h(
        "dl",
        { class: "remaining" },
        row(
          "Left this minute",
          h("strong", { "data-remaining": "minute" }, String(session.remaining.minute.remaining)),
          ` of ${session.limits.perMinute}, until `,
          when(session.remaining.minute.resetAt),
        ),
        row(
          "Left today",
          h("strong", { "data-remaining": "day" }, String(session.remaining.day.remaining)),
          ` of ${session.limits.perDay}, until `,
          when(session.remaining.day.resetAt),
        ),
      ),
    );
  const { key } = first;
  show(
    root,
    h("h1", { tabindex: -1 }, "Overview"),
    h(
      "dl",
      { class: "facts" },
      row("Name", key.name),
      row(
        "Key",
        h("code", {}, key.start ? `${key.start}…` : "(made before prefixes were kept)"),
        " ",
        h("code", {}, key.id),
      ),
      row("Plan", key.plan),
      row("Limits", `${first.limits.perMinute} a minute, ${first.limits.perDay} a day`),
      row("Scopes", key.scopes.join(", ")),
      row("Key expires", key.expiresAt ? when(key.expiresAt) : "never"),
      row("Session ends", when(first.session?.expiresAt)),
    ),
    h("h2", {}, "Now"),
    remaining,
  );
  drawRemaining(first);
  const timer = setInterval(async () => {
    try {
      drawRemaining(await call<Session>("GET", "/console/session"));
    } catch (error) {
      show(remaining, notice(messageOf(error), "error"));
    }
  }, REFRESH_MS);
  return () => clearInterval(timer);
};
