// Starts Swagger UI on this server's own description of the API.
window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    // Swagger UI would otherwise send the document to validator.swagger.io for a badge: nothing
    // leaves this page.
    validatorUrl: null,
  });
});
