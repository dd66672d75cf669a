"""What a planned scan is, as data: the spec Spark carries to its workers (:mod:`.spec`), its
remote query (:mod:`.query`), a pushed aggregation (:mod:`.aggregation`) or join (:mod:`.join`),
the statistics a source's planner keeps (:mod:`.statistics`), Spark's V2 expressions as
trees (:mod:`.v2`), and what ``fed.plan`` reads back of each scan Spark planned (:mod:`.plan`).

Sources read these and the planner builds them; nothing here imports either, so
``sources/`` never imports ``planner/``.
"""
