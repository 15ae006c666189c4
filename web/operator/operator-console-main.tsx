/**
 * The operators' console (docs/operations.md#the-operators-console): signs in (an operator's token pasted once, a
 * link, or Cloudflare Access in front), then shows one view at a time, as the callers' console does. A client of the
 * operator API.
 */
import "uplot/dist/uPlot.min.css";
import "../kit/console.css";
import { startShell } from "../kit/console-shell";
import { admin } from "./operator-api";
import type { OperatorSignedIn } from "./operator-api-types";
import { AccountView } from "./views/account";
import { EveryEndpointView } from "./views/endpoints-of-every-account";
import { KeySearchView } from "./views/key-search";
import { PipelineView } from "./views/pipeline";
import { TrafficView } from "./views/traffic";
import { SignIn } from "./views/token-sign-in";

startShell<OperatorSignedIn>(document.getElementById("console")!, {
  product: "Store Orders operators",
  brand: "operators",
  navigation: "Operators' console",
  views: {
    pipeline: { title: "Pipeline", View: PipelineView },
    traffic: { title: "Traffic", View: TrafficView },
    keys: { title: "Keys", View: KeySearchView },
    webhooks: { title: "Webhooks", View: EveryEndpointView },
    // An account's page is reached from a key or an endpoint, not from the navigation.
    budget: { title: "Account", View: AccountView, listed: false },
  },
  home: "pipeline",
  session: () => admin<OperatorSignedIn>("GET", "/session"),
  redeem: (token) => admin("POST", "/session/link", { body: { token } }),
  // A colleague's link must not make whoever opens it act, and be audited, as that colleague unasked.
  replaceWithLink: (current) =>
    confirm(`You are signed in as ${current.operator}. Sign in as the operator this link was made for instead?`),
  SignIn,
  who: (who) => <span id="operator-name">{who.operator}</span>,
  // Behind Access there is no session of this service's to end: Access signs out.
  signOut: (who) => (who.via === "session" ? () => admin("DELETE", "/session") : null),
});
