"""The Sluice Flight server: publishes attached sources' tables over Arrow Flight.

It answers GetFlightInfo by planning the read with the sources' own planner and DoGet by
reading a signed ticket. The wire formats it speaks (filter encodings, the protocol's
messages, authentication headers) live in :mod:`sluice.flight`, which the Flight *client*
source (:mod:`sluice.sources.flight`) shares; this package sits above both, so nothing in
``flight`` imports the sources.
"""
