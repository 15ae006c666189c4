/** What this service is, as `GET /` and the OpenAPI document name it. */
export const SERVICE = { name: "Store Orders", version: "1.0.0" } as const;

/** The version prefix of every path (docs/api.md#versioning-stability-and-deprecation). */
export const VERSION_PREFIX = "/v1";
