"""Server-rendered pages; each view is thin and calls the services."""
