"""Tools of a Sluice checkout, not of the library: the demo, the pushdown-matrix generator
and a local standalone Spark cluster. Run from the repository root (``python -m tools.demo``);
they are not shipped in the wheel."""
