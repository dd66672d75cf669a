"""The pushdown core: levels, literal typing, and translation of predicates to a source."""
