"""The embedded demo: two SQLite files it builds itself, and federated queries over them.

It needs no server, so ``make demo`` works on any laptop: :mod:`tools.demo.world`
builds the data, :mod:`tools.demo.run` shows each pushdown level at work.
"""
