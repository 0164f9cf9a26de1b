"""The store: SQLAlchemy's schema, loading and every algorithm as SQL over a stored graph.

It names no game and reads no registry: what a game offers comes in as arguments (its declared spec).
"""
