"""The researchers' pages; each is thin, asks the access module who may see what and calls the services."""
