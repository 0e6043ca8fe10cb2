"""Memory servers measured where they live: any MCP server (``-systems mcp:NAME|PATH``) or REST memory service
(``-systems http:NAME|PATH``), through a declarative mapping file and no code.

- ``mapping``: the mapping file (TOML or JSON): which tool or route stores an item and which searches, how the
  item's fields and the query go in, how ids and scores come out (``mappings/`` holds the shipped ones).
- ``mcp_transport``: one MCP server over the official ``mcp`` SDK (a stdio process it starts, or a URL).
- ``http_transport``: one REST service over the project's HTTP client (``clients.http``).
- ``system``: ``ProtocolSystem``, the ``System`` both share: start-up timed apart, the mapping checked against the
  server's tool schemas before any write, batched and bounded ingest, every reply checked.
- ``serve``: any registered memini-bench system served as an MCP stdio server (the transport's own cost is then
  measured against the same system called in process).

``-systems mcp:basic-memory?timeout=60&concurrency=4`` overrides the mapping's ``timeout``, ``startup_timeout``,
``batch`` and ``concurrency`` for one run (recorded in ``describe()``, so in the results identity).
"""
