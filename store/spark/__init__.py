"""Apache Spark SQL as a dicegraph database: the dialect (``spark://HOST:PORT/DATABASE``, :mod:`store.spark.dialect`)
and a local standalone cluster to run it on (:mod:`store.spark.cluster`)."""
