"""Herders: the one interface through which a Connect cluster is operated."""
