"""``/metrics``: the registry primitives (``registry``) apart from the collectors that use them (``server``,
``queues``, ``process``), so that the primitives import nothing of the server."""
