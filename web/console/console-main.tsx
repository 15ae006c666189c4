/**
 * The console (docs/api.md#the-console): signs in (a key pasted once, or an operator's link), then shows one view at
 * a time (console-shell.tsx).
 */
import "uplot/dist/uPlot.min.css";
import "../kit/console.css";
import { call } from "../kit/api-client";
import type { Session } from "../kit/api-types";
import { startShell } from "../kit/console-shell";
import { EventsView } from "./views/events";
import { SignIn } from "./views/key-sign-in";
import { OverviewView } from "./views/overview";
import { KeysView } from "./views/own-keys";
import { UsageView } from "./views/usage";
import { WebhooksView } from "./views/webhooks/webhooks-view";

startShell<Session>(document.getElementById("console")!, {
  product: "Store Orders console",
  brand: "console",
  navigation: "Console",
  views: {
    overview: { title: "Overview", View: OverviewView },
    usage: { title: "Usage", View: UsageView },
    keys: { title: "Keys", View: KeysView },
    webhooks: { title: "Webhooks", View: WebhooksView },
    events: { title: "Events", View: EventsView },
  },
  home: "overview",
  session: () => call<Session>("GET", "/console/session"),
  redeem: (token) => call("POST", "/console/session/link", { body: { token } }),
  replaceWithLink: (current) => confirm(`You are signed in as ${current.key.name}. Sign in with this link instead?`),
  SignIn,
  who: (session) => (
    <span>
      {session.key.name} <code>{session.key.start ? `${session.key.start}…` : session.key.id}</code>
    </span>
  ),
  signOut: () => () => call("DELETE", "/console/session"),
});
