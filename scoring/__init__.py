"""Statistics as pure functions over arrays and sequences (no Django, no torch here).

The thin layer that reads responses from the database and stores reports lives beside
these modules and is the only part that imports Django.
"""
