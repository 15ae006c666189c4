/**
 * Each console is a client of the API: every call goes to /v2 (the
 * operators', to /admin) with the session cookie (same origin), so scopes,
 * limits and the audit apply as they do to any client. Errors arrive in the
 * API's Error shape.
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The ids a console puts into an API path, each by the pattern the API gives it. */
const ID_PATTERNS = {
  key: /^key_[0-9A-Za-z]{16}$/,
  endpoint: /^we_[0-9a-f]{20}$/,
  delivery: /^wd_[0-9a-f]{20}_-?[0-9]{1,19}$/,
} as const;
export type IdKind = keyof typeof ID_PATTERNS;

/**
 * Whether `text` is an id of that kind: what a view checks a part of its address by before it draws anything that calls
 * the API.
 */
export const isId = (kind: IdKind, text: string | undefined): boolean =>
  text !== undefined && ID_PATTERNS[kind].test(text);

/**
 * The one way a console builds an API path: literal segments as written, each id checked against its kind's
 * pattern and encoded. A part of the page's address is the caller's to write (a link is anyone's to send):
 * `#/budget/key_X\revoke?` must never become `/keys/key_X/revoke`. Throws on an id that fails, and nothing is sent.
 */
export function apiPath(...segments: (string | { [kind in IdKind]?: string })[]): string {
  return segments
    .map((segment) => {
      if (typeof segment === "string") return segment;
      const [kind, id] = Object.entries(segment)[0] as [IdKind, string];
      if (!isId(kind, id))
        throw new ApiFailure(0, "not_an_id", `${JSON.stringify(String(id).slice(0, 40))} is not a ${kind} id.`);
      return encodeURIComponent(id);
    })
    .map((segment) => `/${segment}`)
    .join("");
}

/** Called when the session has ended (401): the page goes back to signing in. */
let onSignedOut: (message: string) => void = () => {};
export const whenSignedOut = (handler: (message: string) => void) => {
  onSignedOut = handler;
};

export interface CallOptions {
  body?: unknown;
  /** A key sent once, in the header, instead of the cookie (signing in). */
  key?: string;
  signal?: AbortSignal;
}

/** A client of the API under `base`: /v2 for the callers' console, /admin for the operators'. */
export const clientOf =
  (base: string) =>
  <T>(method: string, path: string, options: CallOptions = {}): Promise<T> =>
    callAt<T>(base, method, path, options);

export const call = clientOf("/v2");

async function callAt<T>(base: string, method: string, path: string, options: CallOptions): Promise<T> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.key !== undefined) headers.Authorization = `Bearer ${options.key}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: "same-origin",
    signal: options.signal,
  });
  if (response.status === 204) return undefined as T;
  const read = await response.json().then(
    (body: unknown) => ({ ok: true as const, body }),
    () => ({ ok: false as const, body: {} }),
  );
  const value = read.body as { code?: string; message?: string };
  if (!response.ok) {
    const failure = new ApiFailure(
      response.status,
      value.code ?? "unknown",
      value.message ?? `HTTP ${response.status}`,
    );
    // A session that ended (signed out elsewhere, its key revoked): back to signing in. Not a key or a link being
    // tried, and not the first look of a browser that has no session at all.
    if (
      response.status === 401 &&
      options.key === undefined &&
      !path.endsWith("/session/link") &&
      failure.code !== "missing_api_key"
    )
      onSignedOut(failure.message);
    throw failure;
  }
  // A success whose body could not be read (cut off on the way) is no answer: the view says so, and draws nothing.
  if (!read.ok)
    throw new ApiFailure(response.status, "unknown", `HTTP ${response.status}: the answer could not be read`);
  return value as T;
}

/** An error's message for the page. */
export const messageOf = (error: unknown) =>
  error instanceof ApiFailure
    ? `${error.message} (${error.code})`
    : error instanceof Error
      ? error.message
      : String(error);
