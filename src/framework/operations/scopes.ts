import { z } from "zod";

/**
 * What an operation asks of a key (docs/api.md#authentication): read orders (the list, the feed, the
 * deprecated pets), write them (cancel), manage its budget's webhook endpoints. Keys carry them; the
 * operation names the one it needs.
 */
export const SCOPES = ["orders:read", "orders:write", "webhooks:manage"] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;
