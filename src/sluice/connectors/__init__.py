"""Built-in connectors. They import only :mod:`sluice.api`."""
