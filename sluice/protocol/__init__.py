"""Sluice's JVM-planner protocol: one frozen dataclass per request and per answer.

The Java catalog layer (``java/io/sluice/spark``) calls ``Planner.call(method, request)`` with
JSON; :mod:`sluice.spark.bridge` decodes the request into its method's dataclass here
(:func:`~sluice.protocol.codec.decode`, which names the method and key of anything malformed),
runs the method's handler and encodes its answer. ``schema.json`` is the protocol as a JSON
Schema and ``java/io/sluice/spark/Protocol.java`` its key names for Java, both generated from
these dataclasses by ``python -m tools.protocol_schema`` (unit tests fail when either is stale).
"""
