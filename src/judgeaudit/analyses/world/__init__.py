"""The world analyses (blind-spot.txt §3–7): pure functions over world items and verdict tables.

``pooling`` (votes pooled into one report per answer), ``scoring`` (reports scored against the gold),
``segments`` (free-text reports scored per marked segment and per sentence), ``matching`` (the
requests and replies of the generous matcher backed by a judge) and ``correlate`` (per-answer gains
against covariates). Requests, judge calls and runs stay in ``judgeaudit.world``.
"""
