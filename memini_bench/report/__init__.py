"""``memini-bench report PATH... -o DIR``: a static leaderboard site (and table exports) from results files.

Modules, one job each:

- ``collect``: the inputs. PATHs (results files, folders of them, per-question ``.jsonl`` files) become
  ``Inputs``: every leaderboard results file (``results.read.CompareResults``), sweep summaries, VetoBench files,
  and the per-question runs paired with their results file (``<stem>.jsonl`` beside it, or given and matched by
  systems and question ids).
- ``model``: the numbers the pages and exports show: one ``Row`` per (results file, system), each file's
  provenance, its Holm-adjusted significance rows, the Pareto front of recall against latency, Wilson intervals.
- ``exports``: the leaderboard as Markdown (the README's results table), CSV, LaTeX (booktabs) and JSON.
- ``receipts``: per-question receipts (gold, each run's top k with snippets and the first gold rank), written as
  paginated script files so a LongMemEval-M-sized run loads one page at a time.
- ``texts``: question and item texts for the receipts, read from the data set a results file names (only when
  its sha256 still matches the one recorded).
- ``plots``: matplotlib figures as inline SVG (fonts as paths: nothing to fetch).
- ``site``: renders the Jinja2 templates (package data in ``templates/``) and copies the page script and style.
- ``cli``: the click command.
"""
