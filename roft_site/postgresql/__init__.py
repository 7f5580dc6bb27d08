"""PostgreSQL as Django's own backend, with integers checked against their column's range
before they are sent (``base.DatabaseOperations.adapt_integerfield_value``)."""
