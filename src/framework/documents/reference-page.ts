import { API_VERSIONS, VERSION_PREFIX, type ApiVersion } from "../service-identity";
import { defineOperation } from "../operations/define-operation";
import { htmlBody } from "../counted-body";

/** Where v1's reference page lives, and the page's script among the static assets. */
export const REFERENCE_PATH = `${VERSION_PREFIX}/docs`;
const SCRIPT_PATH = `${REFERENCE_PATH}/scalar.js`;

/** An operation's section on the reference page: Scalar's `#tag/<tag slug>/<METHOD><path>`, braces encoded. */
export function referenceLink(baseUrl: string, operation: { tag: string; method: string; path: string }): string {
  const tag = operation.tag.toLowerCase().replaceAll(" ", "-");
  return `${baseUrl}/docs#tag/${tag}/${operation.method.toUpperCase()}${encodeURI(operation.path)}`;
}

/** Scalar's options, from the page's data attributes (no inline script): nothing that calls out of this origin. */
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

/** Only this origin. Scalar writes styles at run time, hence 'unsafe-inline' for styles, never scripts. */
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

/** One version's page: its document, the script from the assets, links to every version's page. */
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

/** `GET <version>/docs`: the API reference for people, built from the version's document. */
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
