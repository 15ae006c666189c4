/** One of the caller's limits, as the service last reported it. */
export interface RateLimitWindow {
  /** The policy's name: "minute" or "day". */
  name: string;
  /** Requests allowed per window (RateLimit-Policy `q`). */
  quota?: number;
  /** The window's length in seconds (RateLimit-Policy `w`). */
  windowSeconds?: number;
  /** At most this many are left in this window (RateLimit `r`); other locations may have used some. */
  remaining?: number;
  /** Seconds until the window resets (RateLimit `t`). */
  resetSeconds?: number;
}

export interface RateLimitState {
  windows: RateLimitWindow[];
  /** When the response that carried it arrived (ms since the epoch). */
  observedAt: number;
}

/** `"minute";r=58;t=56, "day";r=998;t=39476` (IETF RateLimit headers): each item's name and integer parameters. */
function parseItems(header: string): Map<string, Record<string, number>> {
  const items = new Map<string, Record<string, number>>();
  for (const item of header.split(",")) {
    const [name, ...params] = item.trim().split(";");
    if (!name) continue;
    const values: Record<string, number> = {};
    for (const param of params) {
      const [key, value] = param.trim().split("=");
      if (key && value !== undefined && /^[0-9]+$/.test(value)) values[key] = Number(value);
    }
    items.set(name.replace(/^"|"$/g, ""), values);
  }
  return items;
}

/** The state in a response's RateLimit and RateLimit-Policy headers; undefined when it has neither. */
export function rateLimitOf(headers: Headers, now = Date.now()): RateLimitState | undefined {
  const current = headers.get("RateLimit");
  const policy = headers.get("RateLimit-Policy");
  if (current === null && policy === null) return undefined;
  const remaining = parseItems(current ?? "");
  const policies = parseItems(policy ?? "");
  const names = [...new Set([...policies.keys(), ...remaining.keys()])];
  return {
    observedAt: now,
    windows: names.map((name) => ({
      name,
      quota: policies.get(name)?.q,
      windowSeconds: policies.get(name)?.w,
      remaining: remaining.get(name)?.r,
      resetSeconds: remaining.get(name)?.t,
    })),
  };
}
