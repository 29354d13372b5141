// Starts Swagger UI on the server's own document. A file, not an inline
// script, so that the page's Content-Security-Policy can forbid inline code.
(function () {
  'use strict';
  window.ui = window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
    // Never send the document to an outside validator, never load another document from the query string.
    validatorUrl: null,
    queryConfigEnabled: false,
    // The bearer token typed in "Authorize" lives in this tab only, not in localStorage.
    persistAuthorization: false,
    tryItOutEnabled: true,
  });
})();
