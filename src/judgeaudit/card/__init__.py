"""One validity card per judge, gathered from existing run folders (never recomputed), and the
§6.1 checklist of construct-validity.txt.

* ``sources``   — finding and reading the runs' ``result.json`` files (kind detected by keys);
* ``checklist`` — the six items of §6.1, each ✓/✗ with its evidence;
* ``build``     — the card's sections for one judge, and the rule-based verdict paragraph;
* ``render``    — card.html.
"""
