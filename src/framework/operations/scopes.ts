import { z } from "zod";

/**
 * What an operation asks of a key (docs/api.md#authentication): read or write orders, manage webhook endpoints or keys.
 */
export const SCOPES = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

/** What an operation that any valid key may call asks for instead of a scope (the console's sign-in, its session). */
export const ANY_KEY = "any key";
export type KeyRequirement = Scope | typeof ANY_KEY;

/** What an operation asks of the calling key, answered in the one step that admits a request. */
export interface KeyNeed {
  /** Every scope it needs; none where any valid key may call. */
  scopes: readonly Scope[];
  /** Set where it acts beyond the calling key (on what, named in the 403): a key rotated away may not call it. */
  beyondItself?: string;
}
