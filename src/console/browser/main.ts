/**
 * The console (docs/api.md#the-console): signs in (a key pasted once, or an
 * operator's link), then shows one view at a time, chosen by the address's
 * fragment so each view can be linked to and the back button works.
 */
import "uplot/dist/uPlot.min.css";
import "./console.css";
import { ApiFailure, call, messageOf, whenSignedOut } from "./api";
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
const LINK = /^#link=([A-Za-z0-9_-]+)$/;
let stopView: (() => void) | void;
/** The signed-in key as the views see it: changed in place when the session moves (a rotation). */
let session: Session | undefined;

async function start(): Promise<void> {
  whenSignedOut((message) => signIn(message));
  window.onhashchange = () => (LINK.test(location.hash) ? void followLink() : route());
  if (LINK.test(location.hash)) return followLink();
  await enter();
}

/**
 * Signs in with the link in the address (opened in a new tab, or in one
 * already showing the console). The token leaves the address at once: not in
 * the history, a bookmark or a screenshot. Someone already signed in is
 * asked first, so a link cannot swap their session unnoticed.
 */
async function followLink(): Promise<void> {
  const token = LINK.exec(location.hash)![1]!;
  history.replaceState(null, "", `${location.pathname}#/overview`);
  const signedIn = session ?? (await call<Session>("GET", "/console/session").catch(() => undefined));
  if (signedIn && !confirm(`You are signed in as ${signedIn.key.name}. Sign in with this link instead?`)) return enter();
  try {
    await call("POST", "/console/session/link", { body: { token } });
  } catch (error) {
    return signIn(messageOf(error));
  }
  await enter();
}

/** Shows the signed-in console, or the sign-in form when there is no session. */
async function enter(): Promise<void> {
  try {
    session = await call<Session>("GET", "/console/session");
  } catch {
    return signIn();
  }
  if (!VIEWS[location.hash.slice(2).split("/")[0]!]) history.replaceState(null, "", "#/overview");
  route();
}

async function refreshSession(): Promise<void> {
  const fresh = await call<Session>("GET", "/console/session");
  if (session) Object.assign(session, fresh);
  else session = fresh;
  main.querySelector("header")?.replaceWith(header(session, location.hash.slice(2).split("/")[0]!));
}

function signIn(message?: string): void {
  stopView?.();
  stopView = undefined;
  session = undefined;
  document.title = "Sign in · Store Orders console";
  show(main, signInView(message, enter));
  main.querySelector<HTMLElement>("h1")?.focus();
}

function route(): void {
  if (!session) return void enter();
  stopView?.();
  const [name, ...rest] = location.hash.slice(2).split("/");
  const chosen = VIEWS[name!] ?? VIEWS.overview!;
  document.title = `${chosen.title} · Store Orders console`;
  const body = h("div", { class: "view" });
  show(main, header(session, name!), body);
  stopView = chosen.view(body, session, rest, { refreshSession });
  // Focus moves to the view's heading, so a keyboard or screen reader user lands where the new content starts.
  body.querySelector<HTMLElement>("h1")?.focus();
}

function header(current: Session, view: string): HTMLElement {
  const signOut = h("button", {
    type: "button",
    class: "quiet",
    onclick: async () => {
      try {
        await call("DELETE", "/console/session");
      } catch (error) {
        // A session that had already ended is signed out all the same.
        if (!(error instanceof ApiFailure && error.status === 401)) return void main.querySelector(".view")?.prepend(notice(messageOf(error), "error"));
      }
      signIn("Signed out.");
    },
  }, "Sign out");
  return h(
    "header",
    {},
    h("div", { class: "brand" }, h("strong", {}, "Store Orders"), " console"),
    h(
      "nav",
      { "aria-label": "Console" },
      h("ul", {}, Object.entries(VIEWS).map(([name, { title }]) => h("li", {}, h("a", { href: `#/${name}`, "aria-current": name === view ? "page" : undefined }, title)))),
    ),
    h("div", { class: "who" }, h("span", {}, current.key.name, " ", h("code", {}, current.key.start ? `${current.key.start}…` : current.key.id)), signOut),
  );
}

void start();
