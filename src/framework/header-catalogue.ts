/** The one catalogue of the headers this API sends or reads, their schemas and CORS standing. */
import { BOOKMARK_HEADER, BOOKMARK_PATTERN } from "../lib/bookmark";

interface HeaderSpec {
  description: string;
  schema: Record<string, unknown>;
  /** Sent on every response but the answers to OPTIONS (CORS preflights and plain OPTIONS alike). */
  always?: true;
  /** Browser code may read it (Access-Control-Expose-Headers). */
  exposed?: true;
  /** Clients send it (Access-Control-Allow-Headers; a documented parameter where an operation reads it). */
  request?: true;
}

const integer = { type: "integer" };
const text = { type: "string" };

export const HEADERS = {
  "X-RateLimit-Limit": {
    description: "Requests allowed in the reported window",
    schema: integer,
    always: true,
    exposed: true,
  },
  "X-RateLimit-Remaining": {
    description:
      "At most this many requests are left in the reported window (other locations may have used some); 0 during a ban",
    schema: integer,
    always: true,
    exposed: true,
  },
  "X-RateLimit-Reset": {
    description: "Unix seconds when the reported window resets (or the ban ends)",
    schema: integer,
    always: true,
    exposed: true,
  },
  "X-RateLimit-Resource": {
    description: "Which window the X-RateLimit fields describe",
    schema: { type: "string", enum: ["minute", "day"] },
    always: true,
    exposed: true,
  },
  RateLimit: {
    description: 'Both windows: `"minute";r=<remaining>;t=<seconds>, "day";r=...;t=...`',
    schema: text,
    always: true,
    exposed: true,
  },
  "RateLimit-Policy": {
    description: 'Both quotas: `"minute";q=<quota>;w=60, "day";q=<quota>;w=86400`',
    schema: text,
    always: true,
    exposed: true,
  },
  "X-Request-Id": { description: "The request's id, also in the logs", schema: text, always: true, exposed: true },
  "X-Worker-Version": {
    description:
      "The id of the Worker version that answered, also in the logs: during a gradual deployment, which release this " +
      "was",
    schema: text,
    always: true,
    exposed: true,
  },
  "Retry-After": {
    description: "Whole seconds to wait before retrying",
    schema: { type: "integer", minimum: 1 },
    exposed: true,
  },
  "WWW-Authenticate": { description: 'RFC 6750 challenge: `Bearer realm="store-orders"`', schema: text },
  Allow: { description: "The methods this path answers", schema: text },
  ETag: {
    description:
      "What the response holds, for revalidation with If-None-Match: the order list's version (v1's list), that " +
      "version " +
      "and the page's query (a v2 page), or the order's JSON (one v2 order)",
    schema: text,
    exposed: true,
  },
  "If-None-Match": {
    description:
      "ETags of what you hold (RFC 9110: `*` or a comma-separated list of entity tags). When one is the current " +
      "ETag of what you ask for the answer is 304 with no body; a malformed value is ignored and the body is sent",
    schema: text,
    request: true,
  },
  Deprecation: {
    description: "RFC 9745: `@<unix seconds>` when this operation was deprecated",
    schema: text,
    exposed: true,
  },
  Sunset: { description: "RFC 8594: HTTP-date from which this operation answers 410", schema: text, exposed: true },
  Location: {
    description: "The URL of what a 201 made, where it is read and deleted",
    schema: { type: "string", format: "uri" },
    exposed: true,
  },
  Link: {
    description:
      'RFC 8288 links: rel="deprecation" where a deprecation is documented, rel="next" for the next page of a v2 list',
    schema: text,
    exposed: true,
  },
  "Set-Cookie": {
    description:
      "The console's session cookie (__Host-so_console; so_console on plain http to localhost): HttpOnly, " +
      "SameSite=Strict, Secure but on localhost; set at sign-in, cleared at sign-out and when a session has ended",
    schema: text,
  },
  "Idempotency-Key": {
    description:
      "Makes a retry of this write safe (docs/api.md#retrying-safely): 1 to 255 printable characters of your " +
      "choosing, a new one for each write and the same one for its retries. Within 24 hours the same key, from the " +
      "same API key, gets the first answer again instead of a second write",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
    request: true,
  },
  "Idempotent-Replayed": {
    description:
      "`true` on an answer given again to a retry with the same Idempotency-Key: the write was not made twice",
    schema: { type: "string", enum: ["true"] },
    exposed: true,
  },
  [BOOKMARK_HEADER]: {
    description: "D1 bookmark: how new the data this response saw (or wrote) is. Send it back to read at least that",
    schema: { type: "string", pattern: BOOKMARK_PATTERN.source },
    exposed: true,
    request: true,
  },
} as const satisfies Record<string, HeaderSpec>;

export type HeaderName = keyof typeof HEADERS;

const names = (flag: "always" | "exposed" | "request") =>
  (Object.keys(HEADERS) as HeaderName[]).filter((name) => (HEADERS[name] as HeaderSpec)[flag]);

export const ALWAYS_SENT = names("always");
export const EXPOSED = names("exposed");
export const CLIENT_SENT = names("request");
