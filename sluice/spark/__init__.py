"""Everything that talks to Spark: the session, the Python Data Source, execution."""
