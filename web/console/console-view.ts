import type { Session } from "../kit/api-types";

/** What a view may ask of the page around it. */
export interface ConsolePage {
  /** Reads the session again (after it moved to another key) and shows the key it now stands for. */
  refreshSession(): Promise<void>;
}

/** A view draws into its element and returns what stops its timers and polls when another view replaces it. */
export type View = (root: HTMLElement, session: Session, route: string[], page: ConsolePage) => (() => void) | void;
