/**
 * The console (docs/api.md#the-console): signs in (a key pasted once, or an
 * operator's link), then shows one view at a time (shell.ts).
 */
import "uplot/dist/uPlot.min.css";
import "../kit/console.css";
import { call } from "../kit/api-client";
import { h } from "../kit/dom";
import { Shell, type ShellView } from "../kit/console-shell";
import type { Session } from "../kit/api-types";
import type { View } from "./console-view";
import { overviewView } from "./views/overview";
import { usageView } from "./views/usage";
import { keysView } from "./views/own-keys";
import { webhooksView } from "./views/webhooks/webhooks-view";
import { eventsView } from "./views/events";
import { signInView } from "./views/key-sign-in";

const view = (title: string, draw: View): ShellView<Session> => ({
  title,
  draw: (body, session, route) => draw(body, session, route, { refreshSession: () => shell.refresh() }),
});

const shell: Shell<Session> = new Shell(document.getElementById("console")!, {
  product: "Store Orders console",
  brand: "console",
  navigation: "Console",
  views: {
    overview: view("Overview", overviewView),
    usage: view("Usage", usageView),
    keys: view("Keys", keysView),
    webhooks: view("Webhooks", webhooksView),
    events: view("Events", eventsView),
  },
  home: "overview",
  session: () => call<Session>("GET", "/console/session"),
  redeem: (token) => call("POST", "/console/session/link", { body: { token } }),
  replaceWithLink: (current) => confirm(`You are signed in as ${current.key.name}. Sign in with this link instead?`),
  signInView,
  who: (session) => [
    h("span", {}, session.key.name, " ", h("code", {}, session.key.start ? `${session.key.start}…` : session.key.id)),
  ],
  signOut: () => () => call("DELETE", "/console/session"),
});

void shell.start();
