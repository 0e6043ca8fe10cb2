"""Peers side by side: the libraries and stores a memory-system builder would pick instead of memini, and the
peers' published retrieval recipes, each a ``System`` (``memini_bench.core.contract``) measured on the same items,
groups, gold and cached vectors as memini's own systems.

Two kinds live here, one module each:

- *Library adapters* hand the data set to a real library and ask it to retrieve (``bm25s``, ``sqlite_vec``; the
  LanceDB, Qdrant, Chroma and mem0 adapters are siblings). Each is an optional pip extra named in its registration
  (``memini_bench.core.builtins``), so a missing package is the one-line error ``<system> needs the <extra> extra``; the
  module imports its library at the top for that reason.
- *Reference recipes* re-implement a peer's published benchmark recipe on the harness's own code (``agentmemory``,
  ``mempalace``): the peer's README numbers come from its own harness, embedder and protocol; here the same recipe
  runs on our items and vectors, so the comparison is measured instead of quoted. Each docstring cites the source
  files it follows (repository, path, commit) and says where it departs from them.

Rules every adapter keeps (the tests check them):

1. **One encoder.** Vectors come from the run's shared encoder (``ctx.encoder``: ``documents`` for items,
   ``queries`` in ``prepare`` for every question at once); every text is embedded once per run and comes from the
   disk cache afterwards. A library's own embedding model is never used (Chroma's default downloads one).
2. **The group is a hard boundary.** ``recall(group, ...)`` returns hits of ``group`` only, whatever the library's
   filter does (a masked or filtered-out document that a library still returns is dropped, never shown).
3. **No network, no home folder.** Everything a library writes goes to a temporary folder made for the run and
   removed in ``close()``; nothing reads or writes ``~`` (mem0's ``~/.mem0``, caches, telemetry are pointed away or
   off). The tests run every adapter under a socket guard that fails on any non-loopback connection.
4. **Say what ran.** ``describe()`` records the library and its version and every setting that changes the
   numbers (tokenizer, stemmer, stop words, index kind, fusion constants, depths), so a results file names them.
5. **Library defaults, unless they break the comparison.** Settings are what a builder following the library's
   documentation would use; where we must depart (exact instead of approximate search, a guard against a known
   trap) the module docstring says so and why.

``common`` holds what the adapters share: the temp folder, the group index, version look-up and hit building.
"""
