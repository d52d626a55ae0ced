"""The only package that imports PySpark: the data plane's Spark jobs.

``executor`` runs inside Spark's Python workers; ``runner`` and ``session`` run
on the driver (the worker process).
"""
