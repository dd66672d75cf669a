"""Arrow Flight: a server that publishes attached tables with faithful pushdown, and its protocol.

The server (:mod:`sluice.flight.server`) needs no Spark: it opens sources, reads each
request's filter in one of three encodings (Sluice's JSON format, the DuckDB Airport
extension's JSON, Substrait extended expressions), classifies every conjunct with the
same core as ``Federation.sql`` and answers with one endpoint per partition plus the
level of every conjunct. The client is :class:`sluice.sources.flight.FlightSource`.
"""
