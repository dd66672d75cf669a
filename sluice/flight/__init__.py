"""Arrow Flight's wire formats as Sluice speaks them: the protocol's messages, the three filter
encodings (Sluice's JSON format, the DuckDB Airport extension's JSON, Substrait extended
expressions), literal spelling, the dialect a Flight service's answers are read under, and
authentication headers.

Both ends share them: the client source (:class:`sluice.sources.flight.FlightSource`) and the
server (:mod:`sluice.serve`), which needs no Spark, opens sources, classifies every conjunct
with the same core as ``Federation.sql`` and answers with one endpoint per partition plus the
level of every conjunct. Nothing here imports the sources, so the client imports no server.
"""
