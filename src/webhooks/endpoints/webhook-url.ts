import { nonPublicHost } from "../../lib/non-public-host";

export const MAX_WEBHOOK_URL_LENGTH = 2_048;
const LOCAL_HOSTS: readonly string[] = ["localhost", "127.0.0.1"];

/**
 * Where a webhook may point (docs/api.md#webhook-endpoints): `https` (plain `http` to this machine when run locally),
 * no credentials, at most 2,048 characters; deployed, never a host off the public internet, which the Worker could
 * reach and the caller not. What is wrong, or undefined.
 */
export function webhookUrlProblem(text: string, local: boolean): string | undefined {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return `url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "url is not an absolute URL";
  }
  if (url.username !== "" || url.password !== "")
    return "url must not carry credentials: the signature is how a receiver knows the sender";
  if (text.includes("#")) return "url must not carry a fragment (#...): it is never sent to the receiver";
  if (local) {
    if (url.protocol === "https:" || (url.protocol === "http:" && LOCAL_HOSTS.includes(url.hostname))) return undefined;
    return "url must be https (or http to localhost or 127.0.0.1 while the service runs locally)";
  }
  if (url.protocol !== "https:") return "url must be https";
  const host = nonPublicHost(url.hostname);
  return host === undefined ? undefined : `url must name a host on the public internet: ${url.hostname} is ${host}`;
}

/**
 * The one form a webhook URL is stored and compared in, so an operator's lock holds the URL and not one spelling: the
 * WHATWG parser's, no trailing dot, unreserved characters decoded and the rest in upper-case hex (RFC 3986, 6.2.2).
 */
export function normalWebhookUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  const decodeUnreserved = (part: string) =>
    part.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
      const char = String.fromCharCode(parseInt(hex, 16));
      return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`;
    });
  // The WHATWG parser keeps a host's trailing dot (the root label): `receiver.example.` is `receiver.example`.
  const host = `${hostOfUrl(url)}${url.port ? `:${url.port}` : ""}`;
  return `${url.protocol}//${host}${decodeUnreserved(url.pathname)}${decodeUnreserved(url.search)}`;
}

/** A URL's host in the normal form: the parser's (lower-case, IDNs in ASCII), without a trailing dot. */
const hostOfUrl = (url: URL) => url.hostname.replace(/\.$/, "");

/** The host of a webhook URL in its normal form, as host locks name it; undefined for a URL that does not parse. */
export function webhookHost(text: string): string | undefined {
  try {
    return hostOfUrl(new URL(text));
  } catch {
    return undefined;
  }
}

/** A host name as an operator writes it, in normal form; undefined when it is not a host alone. */
export function normalHost(text: string): string | undefined {
  if (!/^[^\s/?#@:\\]+$/.test(text) && !/^\[[0-9A-Fa-f:.]+\]$/.test(text)) return undefined;
  try {
    const url = new URL(`https://${text}/`);
    return url.port === "" && url.pathname === "/" ? hostOfUrl(url) : undefined;
  } catch {
    return undefined;
  }
}

/** True when the service runs on this machine (npm start): its own base URL is on a loopback host. */
export const servedLocally = (baseUrl: string) => LOCAL_HOSTS.includes(new URL(baseUrl).hostname);
