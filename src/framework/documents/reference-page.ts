import { API_VERSIONS, VERSION_PREFIX, type ApiVersion } from "../service-identity";
import { defineOperation } from "../operations/define-operation";
import { htmlBody } from "../counted-body";

/**
 * Where v1's reference page lives, and the script of every version's page among the static assets
 * (scripts/build-assets.ts copies it there).
 */
export const REFERENCE_PATH = `${VERSION_PREFIX}/docs`;
const SCRIPT_PATH = `${REFERENCE_PATH}/scalar.js`;

/**
 * The address of an operation's section on the reference page: Scalar's
 * anchor, `#tag/<tag slug>/<METHOD><path>`, with the path's braces encoded.
 */
export function referenceLink(baseUrl: string, operation: { tag: string; method: string; path: string }): string {
  const tag = operation.tag.toLowerCase().replaceAll(" ", "-");
  return `${baseUrl}/docs#tag/${tag}/${operation.method.toUpperCase()}${encodeURI(operation.path)}`;
}

/**
 * Scalar's options, read from the page's data attributes so the page needs no
 * inline script: no fonts from Scalar's servers, no third-party client
 * generators or AI features, nothing that calls out of this origin.
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  // Every operation on the page from the start, so a link to one always finds its section.
  defaultOpenAllTags: true,
  hideClientButton: true,
  hideDarkModeToggle: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  telemetry: false,
  showDeveloperTools: "never",
  documentDownloadType: "json",
};

/**
 * Only this origin: the page, its script and the document. Scalar writes its
 * styles at run time, hence 'unsafe-inline' for styles (never for scripts).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeAttribute = (value: string) =>
  value.replaceAll("&", "&amp;").replaceAll("'", "&#39;").replaceAll("<", "&lt;");

/**
 * The page of one version: its document, the script from the assets (under /v1/docs, where `npm install` copies it),
 * links to every version's page.
 */
function pageOf(version: ApiVersion): string {
  const others = Object.values(API_VERSIONS)
    .map(({ prefix }) => `<a href="${prefix}/docs">${prefix.slice(1)}</a>`)
    .join(" · ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Store Orders API ${version.prefix.slice(1)} reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<nav aria-label="API versions">Versions: ${others}</nav>
<noscript>This reference needs JavaScript. The OpenAPI document itself is at
<a href="${version.prefix}/openapi.json">${version.prefix}/openapi.json</a>.</noscript>
<script id="api-reference" data-url="${version.prefix}/openapi.json"
data-configuration='${escapeAttribute(JSON.stringify(SCALAR_CONFIGURATION))}'></script>
<script src="${SCRIPT_PATH}"></script>
</body>
</html>
`;
}

/**
 * `GET <version>/docs`: the API reference for people, rendered in the browser
 * from that version's OpenAPI document (docs/api.md#clients). It needs no key;
 * like every call without one, it is limited per address. Not an operation of
 * the API: the document points to it as its externalDocs.
 */
export const referencePageOperation = (version: ApiVersion) => {
  const page = pageOf(version);
  return defineOperation({
    operationId: "getReferencePage",
    public: true,
    documented: false,
    method: "get",
    path: "/docs",
    summary: "The API reference page",
    description: "This API's reference for people, rendered from the OpenAPI document, with no third-party hosts.",
    tag: "Service",
    stability: "stable",
    responses: { 200: { description: "The reference page (HTML)" } },
    errors: [],
    handle(c) {
      return htmlBody(c, page, CONTENT_SECURITY_POLICY);
    },
  });
};
