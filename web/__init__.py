"""The explorer, ``dicegraph serve``: a local web application over the store's functions (Flask, read-only).

Every page has a stable URL and the same content as JSON at that URL plus
``.json`` (Datasette's convention): ``/``, ``/graphs/{id}``,
``/graphs/{id}/positions/{key}``, ``/graphs/{id}/search?q=`` and ``/sql?sql=``.
The pages are rendered on the server from Jinja2 templates (``web/templates``),
with no script and nothing fetched from the network.
"""
