/** What this service is, as `GET /` and the OpenAPI documents name it. */
export const SERVICE = { name: "Store Orders" } as const;

/** The API's versions, each with its prefix and document; adding one is an entry here and a registry. */
export const API_VERSIONS = {
  v1: {
    prefix: "/v1",
    version: "1.0.0",
    stable: "covered by the /v1 promise",
    ids:
      "Ids are 64-bit integers and go beyond 2^53: parse them exactly, never into a double (v2 writes them as " +
      "strings).",
  },
  v2: {
    prefix: "/v2",
    version: "2.0.0",
    stable: "covered by the /v2 promise once v2 is declared stable",
    // docs/api.md#int64-ids-in-v2
    ids:
      "Ids are 64-bit integers written as strings of decimal digits, in bodies and parameters alike: exact in any " +
      "JSON parser.",
  },
} as const;

export type ApiVersion = (typeof API_VERSIONS)[keyof typeof API_VERSIONS];

/** BASE_URL and the other base URL vars end in this prefix; each version's base URL is derived from them. */
export const VERSION_PREFIX = API_VERSIONS.v1.prefix;

/** The base URL of `version` on the deployment whose /v1 base URL is `v1BaseUrl`. */
export const versionBaseUrl = (v1BaseUrl: string, version: ApiVersion) =>
  v1BaseUrl.slice(0, -VERSION_PREFIX.length) + version.prefix;
