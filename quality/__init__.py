"""The recall-quality scoreboard (memini's ``TestRecallQualityScoreboard``, behaviour doc section 13): a tier-mixed
corpus where recall can inject irrelevant durable facts into the window, scored on both recall and precision.

``quality.corpus`` builds the corpus, ``quality.scoreboard`` runs and reports it (``make quality``).
"""
