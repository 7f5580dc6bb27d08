"""The researchers' REST API, versioned under /api/v1/ (one serializer and one view module per domain).

Every view fetches objects through ``annotation.services.access`` (the only place that
decides who reaches what) and changes them through the services; nothing here decides
a permission or writes a row by itself.
"""
