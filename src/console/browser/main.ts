/**
 * The console (docs/api.md#the-console): signs in (a key pasted once, or an
 * operator's link), then shows one view at a time, chosen by the address's
 * fragment so each view can be linked to and the back button works.
 */
import "uplot/dist/uPlot.min.css";
import "./console.css";
import { call, messageOf, whenSignedOut } from "./api";
import { h, notice, show } from "./dom";
import type { Session, View } from "./types";
import { overviewView } from "./views/overview";
import { usageView } from "./views/usage";
import { keysView } from "./views/keys";
import { webhooksView } from "./views/webhooks";
import { eventsView } from "./views/events";
import { signInView } from "./views/sign-in";

const VIEWS: Record<string, { title: string; view: View }> = {
  overview: { title: "Overview", view: overviewView },
  usage: { title: "Usage", view: usageView },
  keys: { title: "Keys", view: keysView },
  webhooks: { title: "Webhooks", view: webhooksView },
  events: { title: "Events", view: eventsView },
};

const main = document.getElementById("console")!;
let stopView: (() => void) | void;

async function start(): Promise<void> {
  whenSignedOut((message) => signIn(message));
  const link = /^#link=([A-Za-z0-9_-]+)$/.exec(location.hash)?.[1];
  if (link) {
    // The token leaves the address at once: not in the history, not in a bookmark, not in a screenshot.
    history.replaceState(null, "", location.pathname);
    try {
      await call("POST", "/console/session/link", { body: { token: link } });
    } catch (error) {
      return signIn(messageOf(error));
    }
  }
  await enter();
}

/** Shows the signed-in console, or the sign-in form when there is no session. */
export async function enter(): Promise<void> {
  let session: Session;
  try {
    session = await call<Session>("GET", "/console/session");
  } catch {
    return signIn();
  }
  if (!location.hash || !VIEWS[location.hash.slice(2).split("/")[0]!]) history.replaceState(null, "", "#/overview");
  window.onhashchange = () => route(session);
  route(session);
}

function signIn(message?: string): void {
  stopView?.();
  window.onhashchange = null;
  document.title = "Sign in · Store Orders console";
  show(main, signInView(message, enter));
}

function route(session: Session): void {
  stopView?.();
  const [name, ...rest] = location.hash.slice(2).split("/");
  const chosen = VIEWS[name!] ?? VIEWS.overview!;
  document.title = `${chosen.title} · Store Orders console`;
  const body = h("div", { class: "view" });
  show(main, header(session, name!), body);
  stopView = chosen.view(body, session, rest);
  // Focus moves to the view's heading, so a keyboard or screen reader user lands where the new content starts.
  body.querySelector<HTMLElement>("h1")?.focus();
}

function header(session: Session, current: string): HTMLElement {
  const signOut = h("button", {
    type: "button",
    class: "quiet",
    onclick: async () => {
      try {
        await call("DELETE", "/console/session");
        signIn("Signed out.");
      } catch (error) {
        show(main, notice(messageOf(error), "error"));
      }
    },
  }, "Sign out");
  return h(
    "header",
    {},
    h("div", { class: "brand" }, h("strong", {}, "Store Orders"), " console"),
    h(
      "nav",
      { "aria-label": "Console" },
      h("ul", {}, Object.entries(VIEWS).map(([name, { title }]) => h("li", {}, h("a", { href: `#/${name}`, "aria-current": name === current ? "page" : undefined }, title)))),
    ),
    h("div", { class: "who" }, h("span", {}, session.key.name, " ", h("code", {}, session.key.start ? `${session.key.start}…` : session.key.id)), signOut),
  );
}

void start();
