/**
 * What both consoles' pages are: signed in by a secret pasted once or a link in the address, then one view at a
 * time in the page's <main>, chosen by the address's fragment so each view can be linked to and the back button
 * works; a header with the views, who is signed in and a sign-out. Each console is this, configured.
 */
import { type Child, type FC, render, useLayoutEffect, useRef } from "hono/jsx/dom";
import { ApiFailure, messageOf, whenSignedOut } from "./api-client";
import { Notice } from "./parts";
import { useLiveState } from "./live-state";

/** What the shell hands a view: the session, the fragment's parts after the view's name, and how to read it again. */
export interface ShellViewProps<S> {
  session: S;
  route: string[];
  /** Reads the session again (it moved to another key) and shows it in the header and the view. */
  refreshSession(): Promise<void>;
}

export interface ShellView<S> {
  title: string;
  /** Listed in the header's navigation (a page reached from another view is not). */
  listed?: boolean;
  /** Shown while the view is chosen; taken out, its effects' cleanups stop its timers and polls. */
  View: FC<ShellViewProps<S>>;
}

export interface SignInProps {
  /** Why the reader is asked to sign in (signed out, a link refused). */
  message: string | undefined;
  signedIn(): Promise<void>;
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
  SignIn: FC<SignInProps>;
  who(session: S): Child;
  /** Ends the session; null where this page has none to end (Cloudflare Access signs out). */
  signOut(session: S): (() => Promise<unknown>) | null;
}

const LINK = /^#link=([A-Za-z0-9_-]+)$/;

/**
 * What the page shows; `shown` counts each time it is shown anew (a refreshed session is not), so a view and focus
 * follow a link to the same address too.
 */
type Screen<S> =
  | { kind: "waiting"; shown: 0 }
  | { kind: "signIn"; shown: number; message?: string }
  | { kind: "in"; shown: number; session: S; hash: string };

/** The view's name and what follows it in the fragment (`#/budget/key_…`: `budget`, `[key_…]`). */
function parts(hash: string): [string, string[]] {
  const [name, ...rest] = hash.slice(2).split("/");
  return [name!, rest];
}

/** Renders the console configured by `config` into `main`. */
export function startShell<S extends object>(main: HTMLElement, config: ShellConfig<S>): void {
  render(<Shell main={main} config={config as unknown as ShellConfig<object>} />, main);
}

function Shell({ main, config }: { main: HTMLElement; config: ShellConfig<object> }) {
  const [screen, setScreen] = useLiveState<Screen<object>>({ kind: "waiting", shown: 0 });
  const shown = useRef(0);
  /** The signed-in session, for the handlers below, which outlive a render. */
  const current = useRef<object | undefined>(undefined);
  /** Counts the page's turns (a link followed, the console entered): an answer to an older turn is dropped. */
  const turn = useRef(0);

  const signIn = (message?: string) => {
    current.current = undefined;
    setScreen({ kind: "signIn", shown: ++shown.current, message });
  };

  const route = () => {
    if (!current.current) return void enter();
    setScreen({ kind: "in", shown: ++shown.current, session: current.current, hash: location.hash });
  };

  /** Shows the signed-in console, or the sign-in form when there is no session. */
  const enter = async (): Promise<void> => {
    const mine = ++turn.current;
    let session: object;
    try {
      session = await config.session();
    } catch {
      if (mine === turn.current) signIn();
      return;
    }
    // A link followed meanwhile decides who is signed in: this older answer may name the session it replaced.
    if (mine !== turn.current) return;
    current.current = session;
    if (!config.views[parts(location.hash)[0]]) history.replaceState(null, "", `#/${config.home}`);
    route();
  };

  /**
   * Signs in with the link in the address. The token leaves the address at once: not in the history, a bookmark
   * or a screenshot. Someone already signed in may be asked first, so a link cannot swap their session unnoticed.
   */
  const followLink = async (): Promise<void> => {
    const mine = ++turn.current;
    const token = LINK.exec(location.hash)![1]!;
    history.replaceState(null, "", `${location.pathname}#/${config.home}`);
    const ask = config.replaceWithLink;
    if (ask) {
      const signedIn = current.current ?? (await config.session().catch(() => undefined));
      if (mine !== turn.current) return;
      if (signedIn && !ask(signedIn)) return enter();
    }
    try {
      await config.redeem(token);
    } catch (error) {
      if (mine === turn.current) signIn(messageOf(error));
      return;
    }
    if (mine === turn.current) await enter();
  };

  const refreshSession = async (): Promise<void> => {
    const mine = turn.current;
    const fresh = await config.session();
    // A link followed or the console entered meanwhile decides: this answer may name the session it replaced.
    if (mine !== turn.current || !current.current) return;
    current.current = fresh;
    setScreen((now) => (now.kind === "in" ? { ...now, session: fresh } : now));
  };

  // A layout effect, so it runs at once: a link's token leaves the address even in a tab opened in the background.
  useLayoutEffect(() => {
    // Only a signed-in page goes back to signing in: a request still under way when the reader signed out answers
    // 401 too, and must not replace what signing out said.
    whenSignedOut((message) => void (current.current && signIn(message)));
    window.onhashchange = () => (LINK.test(location.hash) ? void followLink() : route());
    void (LINK.test(location.hash) ? followLink() : enter());
  }, []);

  const hash = screen.kind === "in" ? screen.hash : screen.kind;
  const [name, rest] = parts(hash);
  const chosen = config.views[name] ?? config.views[config.home]!;
  const title = screen.kind === "in" ? chosen.title : "Sign in";
  useLayoutEffect(() => {
    if (screen.kind !== "waiting") document.title = `${title} · ${config.product}`;
    // Focus moves to the new heading, so a keyboard or screen reader user lands where the new content starts.
    main.querySelector<HTMLElement>("h1")?.focus();
  }, [screen.shown]);

  if (screen.kind === "waiting") return null;
  if (screen.kind === "signIn") return <config.SignIn message={screen.message} signedIn={enter} />;
  return (
    <>
      <Header
        key={screen.shown}
        config={config}
        session={screen.session}
        view={name}
        signedOut={() => signIn("Signed out.")}
      />
      <div class="view" key={screen.shown}>
        <chosen.View session={screen.session} route={rest} refreshSession={refreshSession} />
      </div>
    </>
  );
}

function Header({
  config,
  session,
  view,
  signedOut,
}: {
  config: ShellConfig<object>;
  session: object;
  view: string;
  signedOut: () => void;
}) {
  const [failure, setFailure] = useLiveState<string>();
  const end = config.signOut(session);
  const signOut = async () => {
    try {
      await end!();
    } catch (error) {
      // A session that had already ended is signed out all the same.
      if (!(error instanceof ApiFailure && error.status === 401)) return setFailure(messageOf(error));
    }
    signedOut();
  };
  return (
    <>
      <header>
        <div class="brand">
          <strong>Store Orders</strong> {config.brand}
        </div>
        <nav aria-label={config.navigation}>
          <ul>
            {Object.entries(config.views)
              .filter(([, { listed }]) => listed !== false)
              .map(([name, { title }]) => (
                <li>
                  <a href={`#/${name}`} aria-current={name === view ? "page" : undefined}>
                    {title}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div class="who">
          {config.who(session)}
          {end && (
            <button type="button" class="quiet" onClick={signOut}>
              Sign out
            </button>
          )}
        </div>
      </header>
      {failure && <Notice text={failure} kind="error" />}
    </>
  );
}
