/**
 * The operators' console (docs/operations.md#the-operators-console): signs in
 * (an operator's token pasted once, a link, or Cloudflare Access in front),
 * then shows one view at a time, chosen by the address's fragment, as the
 * callers' console does. A client of the operator API.
 */
import "uplot/dist/uPlot.min.css";
import "../../../console/browser/console.css";
import { ApiFailure, messageOf, whenSignedOut } from "../../../console/browser/api";
import { h, notice, show } from "../../../console/browser/dom";
import { admin } from "./api";
import type { OperatorSignedIn, OperatorView } from "./types";
import { signInView } from "./views/sign-in";
import { pipelineView } from "./views/pipeline";
import { keysView } from "./views/keys";
import { budgetView } from "./views/budget";
import { webhooksView } from "./views/webhooks";

/** The views in the navigation, and the budget page, reached from a key. */
const VIEWS: Record<string, { title: string; view: OperatorView; listed: boolean }> = {
  pipeline: { title: "Pipeline", view: pipelineView, listed: true },
  keys: { title: "Keys", view: keysView, listed: true },
  webhooks: { title: "Webhooks", view: webhooksView, listed: true },
  budget: { title: "Budget", view: budgetView, listed: false },
};

const main = document.getElementById("console")!;
const LINK = /^#link=([A-Za-z0-9_-]+)$/;
let stopView: (() => void) | void;
let signedIn: OperatorSignedIn | undefined;

async function start(): Promise<void> {
  whenSignedOut((message) => signIn(message));
  window.onhashchange = () => (LINK.test(location.hash) ? void followLink() : route());
  if (LINK.test(location.hash)) return followLink();
  await enter();
}

/** Signs in with the link in the address; the token leaves the address at once. */
async function followLink(): Promise<void> {
  const token = LINK.exec(location.hash)![1]!;
  history.replaceState(null, "", `${location.pathname}#/pipeline`);
  try {
    await admin("POST", "/session/link", { body: { token } });
  } catch (error) {
    return signIn(messageOf(error));
  }
  await enter();
}

async function enter(): Promise<void> {
  try {
    signedIn = await admin<OperatorSignedIn>("GET", "/session");
  } catch {
    return signIn();
  }
  if (!VIEWS[location.hash.slice(2).split("/")[0]!]) history.replaceState(null, "", "#/pipeline");
  route();
}

function signIn(message?: string): void {
  stopView?.();
  stopView = undefined;
  signedIn = undefined;
  document.title = "Sign in · Store Orders operators";
  show(main, signInView(message, enter));
  main.querySelector<HTMLElement>("h1")?.focus();
}

function route(): void {
  if (!signedIn) return void enter();
  stopView?.();
  const [name, ...rest] = location.hash.slice(2).split("/");
  const chosen = VIEWS[name!] ?? VIEWS.pipeline!;
  document.title = `${chosen.title} · Store Orders operators`;
  const body = h("div", { class: "view" });
  show(main, header(signedIn, name!), body);
  stopView = chosen.view(body, rest);
  body.querySelector<HTMLElement>("h1")?.focus();
}

function header(who: OperatorSignedIn, view: string): HTMLElement {
  // Behind Access there is no session of this service's to end: Access signs out.
  const signOut =
    who.via === "session"
      ? h("button", {
          type: "button",
          class: "quiet",
          onclick: async () => {
            try {
              await admin("DELETE", "/session");
            } catch (error) {
              if (!(error instanceof ApiFailure && error.status === 401)) return void main.querySelector(".view")?.prepend(notice(messageOf(error), "error"));
            }
            signIn("Signed out.");
          },
        }, "Sign out")
      : null;
  return h(
    "header",
    {},
    h("div", { class: "brand" }, h("strong", {}, "Store Orders"), " operators"),
    h("nav", { "aria-label": "Operators' console" }, h("ul", {}, Object.entries(VIEWS).filter(([, { listed }]) => listed).map(([name, { title }]) => h("li", {}, h("a", { href: `#/${name}`, "aria-current": name === view ? "page" : undefined }, title))))),
    h("div", { class: "who" }, h("span", { id: "operator-name" }, who.operator), signOut),
  );
}

void start();
