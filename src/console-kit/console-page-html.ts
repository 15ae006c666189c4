/** The consoles' pages: one stylesheet and one script each, and the policy that allows nothing else. */

/** Where the console lives; its script and styles are static assets beside it. */
export const CONSOLE_PATH = "/console";

/**
 * Only this origin, no inline script or style: one bundled script, one stylesheet, the chart sized through the CSSOM.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** A console's page: one stylesheet and one script, served beside it as `<name>.css` and `<name>.js`. */
export const consolePage = (title: string, path: string, name: string, noscript: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${path}/${name}.css">
<script type="module" src="${path}/${name}.js"></script>
</head>
<body>
<main id="console" aria-live="polite"><noscript>${noscript}</noscript></main>
</body>
</html>
`;
