"""The request's edges, for the pages, the API and the middleware: rate limits, idempotency
keys of API writes, the one JSON reader, the mail the site sends. Imports no rule."""
