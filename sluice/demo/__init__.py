"""The embedded demo: two SQLite files it builds itself, and federated queries over them.

It needs no server, so ``make demo`` works on any laptop: :mod:`sluice.demo.world`
builds the data, :mod:`sluice.demo.run` shows each pushdown level at work.
"""
