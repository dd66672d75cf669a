"""The planner: bind a Spark SQL query to sources, optimize it, and describe each scan."""
