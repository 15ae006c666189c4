/**
 * What both consoles' pages are (this one and the operators'): signed in by a
 * secret pasted once or a link in the address, then one view at a time in
 * the page's <main>, chosen by the address's fragment so each view can be
 * linked to and the back button works; a header with the views, who is
 * signed in and a sign-out. Each console is this, configured.
 */
import { ApiFailure, messageOf, whenSignedOut } from "./api-client";
import { h, notice, show } from "./dom";

export interface ShellView<S> {
  title: string;
  /** Listed in the header's navigation (a page reached from another view is not). */
  listed?: boolean;
  /** Draws into `body`; returns what stops its timers and polls when another view replaces it. */
  draw(body: HTMLElement, session: S, route: string[]): (() => void) | void;
}

export interface ShellConfig<S> {
  /** The page's name, after each view's in the title. */
  product: string;
  /** After "Store Orders" in the header. */
  brand: string;
  navigation: string;
  views: Record<string, ShellView<S>>;
  home: string;
  session(): Promise<S>;
  /** Exchanges a link's token for a session. */
  redeem(token: string): Promise<unknown>;
  /** Asked before a link replaces the session someone is signed in with. */
  replaceWithLink?(current: S): boolean;
  signInView(message: string | undefined, signedIn: () => Promise<void>): HTMLElement;
  who(session: S): (Node | string)[];
  /** Ends the session; null where this page has none to end (Cloudflare Access signs out). */
  signOut(session: S): (() => Promise<unknown>) | null;
}

const LINK = /^#link=([A-Za-z0-9_-]+)$/;

export class Shell<S extends object> {
  private stopView: (() => void) | void = undefined;
  /** The signed-in session as the views see it: changed in place when it moves (refresh()). */
  private current: S | undefined;
  /** Counts the page's turns (a link followed, the console entered): an answer to an older turn is dropped. */
  private turn = 0;

  constructor(
    private readonly main: HTMLElement,
    private readonly config: ShellConfig<S>,
  ) {}

  async start(): Promise<void> {
    // Only a signed-in page goes back to signing in: a request still under way when the reader signed out answers
    // 401 too, and must not replace what signing out said.
    whenSignedOut((message) => void (this.current && this.signIn(message)));
    window.onhashchange = () => (LINK.test(location.hash) ? void this.followLink() : this.route());
    if (LINK.test(location.hash)) return this.followLink();
    await this.enter();
  }

  /** Reads the session again (it moved to another key) and shows it in the header. */
  async refresh(): Promise<void> {
    const turn = this.turn;
    const fresh = await this.config.session();
    // A link followed or the console entered meanwhile decides: this answer may name the session it replaced.
    if (turn !== this.turn) return;
    if (this.current) Object.assign(this.current, fresh);
    else this.current = fresh;
    this.main.querySelector("header")?.replaceWith(this.header(this.current, this.parts()[0]));
  }

  /**
   * Signs in with the link in the address (opened in a new tab, or in one
   * already showing the console). The token leaves the address at once: not in
   * the history, a bookmark or a screenshot. Someone already signed in may be
   * asked first, so a link cannot swap their session unnoticed.
   */
  private async followLink(): Promise<void> {
    const turn = ++this.turn;
    const token = LINK.exec(location.hash)![1]!;
    history.replaceState(null, "", `${location.pathname}#/${this.config.home}`);
    const ask = this.config.replaceWithLink;
    if (ask) {
      const signedIn = this.current ?? (await this.config.session().catch(() => undefined));
      if (turn !== this.turn) return;
      if (signedIn && !ask(signedIn)) return this.enter();
    }
    try {
      await this.config.redeem(token);
    } catch (error) {
      if (turn === this.turn) this.signIn(messageOf(error));
      return;
    }
    if (turn === this.turn) await this.enter();
  }

  /** Shows the signed-in console, or the sign-in form when there is no session. */
  private readonly enter = async (): Promise<void> => {
    const turn = ++this.turn;
    let session: S;
    try {
      session = await this.config.session();
    } catch {
      if (turn === this.turn) this.signIn();
      return;
    }
    // A link followed meanwhile decides who is signed in: this older answer may name the session it replaced.
    if (turn !== this.turn) return;
    this.current = session;
    if (!this.config.views[this.parts()[0]]) history.replaceState(null, "", `#/${this.config.home}`);
    this.route();
  };

  private signIn(message?: string): void {
    this.stop();
    this.current = undefined;
    document.title = `Sign in · ${this.config.product}`;
    show(this.main, this.config.signInView(message, this.enter));
    this.main.querySelector<HTMLElement>("h1")?.focus();
  }

  private route(): void {
    const session = this.current;
    if (!session) return void this.enter();
    this.stop();
    const [name, rest] = this.parts();
    const chosen = this.config.views[name] ?? this.config.views[this.config.home]!;
    document.title = `${chosen.title} · ${this.config.product}`;
    const body = h("div", { class: "view" });
    show(this.main, this.header(session, name), body);
    this.stopView = chosen.draw(body, session, rest);
    // Focus moves to the view's heading, so a keyboard or screen reader user lands where the new content starts.
    body.querySelector<HTMLElement>("h1")?.focus();
  }

  /** The view's name and what follows it in the fragment (`#/budget/key_…`: `budget`, `[key_…]`). */
  private parts(): [string, string[]] {
    const [name, ...rest] = location.hash.slice(2).split("/");
    return [name!, rest];
  }

  private header(session: S, view: string): HTMLElement {
    const { brand, navigation, views } = this.config;
    const end = this.config.signOut(session);
    const signOut =
      end &&
      h(
        "button",
        {
          type: "button",
          class: "quiet",
          onclick: async () => {
            try {
              await end();
            } catch (error) {
              // A session that had already ended is signed out all the same.
              if (!(error instanceof ApiFailure && error.status === 401))
                return void this.main.querySelector(".view")?.prepend(notice(messageOf(error), "error"));
            }
            this.signIn("Signed out.");
          },
        },
        "Sign out",
      );
    return h(
      "header",
      {},
      h("div", { class: "brand" }, h("strong", {}, "Store Orders"), ` ${brand}`),
      h(
        "nav",
        { "aria-label": navigation },
        h(
          "ul",
          {},
          Object.entries(views)
            .filter(([, { listed }]) => listed !== false)
            .map(([name, { title }]) =>
              h("li", {}, h("a", { href: `#/${name}`, "aria-current": name === view ? "page" : undefined }, title)),
            ),
        ),
      ),
      h("div", { class: "who" }, ...this.config.who(session), signOut),
    );
  }

  private stop(): void {
    this.stopView?.();
    this.stopView = undefined;
  }
}
