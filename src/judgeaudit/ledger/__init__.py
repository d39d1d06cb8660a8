"""The prediction ledger: predictions written before the runs they govern, frozen by hash, and
scored against the runs' ``result.json`` files (blind-spot.txt §3.8 and Appendix A).

* ``model``  — the records: a ``Prediction`` with lettered ``Clause`` s, each a metric path, a
  comparator and a bar as written, an optional FAILS condition and the run it governs;
* ``store``  — reading and writing the ledger file (YAML or JSON) with line-numbered errors;
* ``commit`` — the canonical serialisation, the SHA-256 commits and the tamper check;
* ``score``  — the five verdicts and the direction of every unit against run results;
* ``report`` — the Table 6 shape and the paper's counting rule.
"""
