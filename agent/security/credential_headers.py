"""The headers that carry a credential in any protocol: each name written here once, for the log filter.

Its one reason to change is a common credential header added or renamed. The log filter
(``agent.security.logsafe``) redacts the value of every header in ``SECRET_HEADERS``, and of every one the wires
declare as their own (a phone provider's signature or token: ``Endpoint.secret_headers`` in
``agent.wires.endpoints``, handed to the filter by the composition root, ``agent.__main__``): a protocol's secret
header is named in its own package, never here, since security sits below the wires and imports none of them.
``Authorization`` is not listed: a name that also occurs in prose, the log filter matches it on its own terms.
"""

from __future__ import annotations

SECRET_HEADERS: tuple[str, ...] = (
    "Proxy-Authorization",
    "Set-Cookie",
    "Cookie",
    "X-Api-Key",
    "X-Amz-Security-Token",
)
"""Headers whose name is never prose: their value is redacted wherever ``Name: value`` shows in a log record."""
