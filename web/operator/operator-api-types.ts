/**
 * What the operator API answers (docs/operations.md#operator-api). It is not
 * in the public documents, so there is no generated client to take these
 * from: they are written here after the operations' schemas in src/operator,
 * but for what a key's record shares with the callers' own key list.
 */
import type { FC } from "hono/jsx/dom";
import type { ShellViewProps } from "../kit/console-shell";
import type { OwnKey } from "../kit/api-types";

export interface OperatorSignedIn {
  operator: string;
  via: "session" | "token" | "access";
  expiresAt: string | null;
}

export interface FoundKey {
  id: string;
  name: string;
  start: string | null;
  plan: string;
  budget: string;
  scopes: string[];
  state: "live" | "expiring" | "grace" | "banned" | "revoked" | "expired";
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  bannedUntil: string | null;
}

export interface OperatorEndpoint {
  id: string;
  url: string;
  budget: string;
  status: "enabled" | "disabled";
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  lastDeliveredAt: string | null;
  types: string[];
  createdAt: string;
}

export interface AccountPage {
  /** What the account counts by now: its keys' own limits, or their plan's. */
  limitsInForce: { perMinute: number; perDay: number };
  budget: string;
  keys: (Omit<FoundKey, "budget" | "bannedUntil"> & {
    limits: { perMinute: number; perDay: number } | null;
  } & Pick<OwnKey, "revokedReason" | "leak" | "madeByLeakedKey">)[];
  timeline: {
    at: string;
    subject: string;
    operation: string;
    actor: string;
    changes: Record<string, unknown>;
    outcome: string | null;
  }[];
}

export interface AccountUsage {
  keyId: string;
  budget: string;
  usage: {
    minute: { count: number; reset: number };
    day: { count: number; reset: number };
    refusedInARow: number;
    bannedUntil: number;
    revoked: string[];
  };
}

export interface PipelineHealth {
  orderEvents: { head: number; prunedThrough: number; rows: number; bytes: number; budgetBytes: number; share: number };
  dispatcher: { mark: number; lag: number; lanesBehind: number };
  orderWrites: { heldSince: string | null };
  database: { bytes: number | null };
  worker: { id: string | null; tag: string | null };
  warnings: string[];
}

export interface Traffic {
  range: "1h" | "6h" | "24h" | "7d";
  bucketSeconds: number;
  series: {
    start: string;
    admitted: number;
    limited: number;
    banned: number;
    unauthenticated: number;
    error: number;
  }[];
  topByRequests: { budget: string; requests: number; refused: number }[];
  topByRefusals: { budget: string; requests: number; refused: number }[];
  bans: { caller: string; refused: number; lastRefusedAt: string }[];
  keyless: { addressGroup: string; requests: number; refused: number }[];
  dataset: string;
}

/** A view of the operators' console: a component the shell shows while it is chosen. */
export type OperatorView = FC<ShellViewProps<OperatorSignedIn>>;
