"""One module per SQL dialect: capabilities, literal spelling, function mapping."""
