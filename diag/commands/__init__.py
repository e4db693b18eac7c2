"""The commands of the command line, one module per family; diag.cli registers them."""
