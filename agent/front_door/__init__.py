"""The front door: the only readers of the ``ENDPOINTS`` table (``agent.wires.endpoints``), above the wires.

Its one reason to change is how the table is served: ``listener`` (start, ready, drain, close), ``routes`` (a
request to its row) and ``exposure`` (what the rows expose, said at start-up).
"""
