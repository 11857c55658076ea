"""The aiohttp API: app factory, routes, auth, problem+json errors, OpenAPI."""
