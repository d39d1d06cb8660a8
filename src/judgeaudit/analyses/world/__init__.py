"""The world analyses (blind-spot.txt §3–7): pure functions over world items and verdict tables.

``options`` (a world run's options, declared once), ``analysis`` (a verdict table to the result: ``analyse``),
``pooling`` (votes pooled into one report per answer), ``scoring`` (reports scored against the gold),
``rates`` (the rates of one judge and arm with their intervals), ``paired`` (paired gains of one arm over
another, McNemar per stratum), ``segments`` (free-text reports scored per marked segment and per sentence),
``matching`` (the requests and replies of the generous matcher backed by a judge), ``correlate`` (per-answer
gains against covariates), ``factorial`` (cells and Shapley values) and ``schema`` (the typed ``result.json``).
Requests, judge calls and runs stay in ``judgeaudit.world``.
"""
