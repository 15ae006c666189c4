/**
 * The operators' console (docs/operations.md#the-operators-console): signs in
 * (an operator's token pasted once, a link, or Cloudflare Access in front),
 * then shows one view at a time, as the callers' console does (its shell.ts).
 * A client of the operator API.
 */
import "uplot/dist/uPlot.min.css";
import "../kit/console.css";
import { h } from "../kit/dom";
import { Shell, type ShellView } from "../kit/console-shell";
import { admin } from "./operator-api";
import type { OperatorSignedIn, OperatorView } from "./operator-api-types";
import { signInView } from "./views/token-sign-in";
import { pipelineView } from "./views/pipeline";
import { trafficView } from "./views/traffic";
import { keysView } from "./views/key-search";
import { accountView } from "./views/account";
import { webhooksView } from "./views/endpoints-of-every-account";

const view = (title: string, draw: OperatorView, listed = true): ShellView<OperatorSignedIn> => ({
  title,
  listed,
  draw: (body, _, route) => draw(body, route),
});

const shell: Shell<OperatorSignedIn> = new Shell(document.getElementById("console")!, {
  product: "Store Orders operators",
  brand: "operators",
  navigation: "Operators' console",
  views: {
    pipeline: view("Pipeline", pipelineView),
    traffic: view("Traffic", trafficView),
    keys: view("Keys", keysView),
    webhooks: view("Webhooks", webhooksView),
    // An account's page is reached from a key or an endpoint, not from the navigation.
    budget: view("Account", accountView, false),
  },
  home: "pipeline",
  session: () => admin<OperatorSignedIn>("GET", "/session"),
  redeem: (token) => admin("POST", "/session/link", { body: { token } }),
  // A colleague's link must not make whoever opens it act, and be audited, as that colleague unasked.
  replaceWithLink: (current) =>
    confirm(`You are signed in as ${current.operator}. Sign in as the operator this link was made for instead?`),
  signInView,
  who: (who) => [h("span", { id: "operator-name" }, who.operator)],
  // Behind Access there is no session of this service's to end: Access signs out.
  signOut: (who) => (who.via === "session" ? () => admin("DELETE", "/session") : null),
});

void shell.start();
