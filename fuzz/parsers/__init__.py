"""Fuzzing the parsers that take outside input: the predicates Spark hands the planner
(V2 expressions, as the catalog layer sends them; Spark parses the SQL itself), the Flight
request decoder (Sluice JSON, Airport JSON and Substrait filters) and the catalog file.

Random and mutated input (byte flips, truncation, splicing of valid seeds, random JSON
trees, deep nesting, huge numbers, wrong types, invalid UTF-8, hostile quoting) must give
a result (for predicates: a verdict, UNSUPPORTED when Sluice has no translation) or a
clean :class:`~sluice.errors.SluiceError`, never another exception, a hang or a
``RecursionError``; accepted input must give remote SQL a source receives as one
statement. Modules: ``tables`` (the fixed tables bound against), ``seeds``, ``mutate``,
``targets`` (one per parser, with its oracle), ``runner`` and the command line in
``__main__``. See docs/reliability.md.
"""
