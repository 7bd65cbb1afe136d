// The API reference page: RapiDoc rendering /api/v1/openapi.json, its script served by this service, so the page
// loads nothing from another origin and a strict Content-Security-Policy holds (test/pages/openapi-page.test.ts checks
// both in Chromium). RapiDoc would fetch its Open Sans from fonts.gstatic.com: `load-fonts="false"` and system
// fonts instead.

/** Where the page loads RapiDoc from (served from node_modules by admin/routes/openapi.ts). */
export const RAPIDOC_PATH = '/docs/rapidoc-min.js';

export const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payroute API reference</title>
<script type="module" src="${RAPIDOC_PATH}"></script>
</head>
<body>
<rapi-doc spec-url="/api/v1/openapi.json" render-style="read" show-header="false"
  allow-spec-url-load="false" allow-spec-file-load="false"
  load-fonts="false" regular-font="system-ui, sans-serif" mono-font="ui-monospace, monospace"></rapi-doc>
</body>
</html>
`;

/**
 * Nothing but this origin's script and document. What RapiDoc measurably needs besides (Chromium, RapiDoc 9.3.8):
 * its theme is a `<style>` element its template renders (values from the element's attributes), its layout sets
 * `style` attributes, and its select boxes draw their arrow from an SVG `data:` URL. No inline or remote script,
 * no remote style, font or image: the page holds no secret, and markup injected into it could still run nothing.
 * `frame-ancestors 'none'`: the page is never framed.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "style-src-elem 'unsafe-inline'",
  "style-src-attr 'unsafe-inline'",
  'img-src data:',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
