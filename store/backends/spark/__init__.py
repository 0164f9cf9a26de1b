"""Apache Spark SQL as a dicegraph database: its record (:mod:`dicegraph.store.backends.spark.backend`), the dialect
(``spark://HOST:PORT/DATABASE``, :mod:`dicegraph.store.backends.spark.dialect`), a local standalone cluster to run it
on (:mod:`dicegraph.store.backends.spark.cluster`), and the folds its solves run.

Importing the package imports nothing: the cluster's commands and defaults need no driver.
"""
