"""One validity card per judge, gathered from existing run folders (never recomputed), and the
§6.1 checklist of construct-validity.txt.

* ``sources``   — finding and reading the runs' ``result.json`` files (kind detected by keys);
* ``checklist`` — the six items of §6.1, each ✓/✗ with its evidence;
* ``build``     — the card's sections for one judge, and the rule-based verdict paragraph;
* ``render``    — card.html;
* ``paired``    — the paired bootstrap of a difference between two runs (``card diff``);
* ``defaults``  — the default runs' data and commands the card names for a section not measured;
* ``make``      — ``card(...)``: build and write one card.

The package is callable: ``judgeaudit.card(judge, from_dirs, out, ledger=None, *, run_missing=False,
yes=False, n_boot=2000)`` builds and writes one card (``judgeaudit.card.make.card``; ``--run-missing``,
the default runs a card lacks, estimated and then run, is ``commands.card_missing.card_with_missing_runs``,
which the command line calls itself and the card finds in its registry ``card.make.MAKERS``, never
importing it).
"""

import sys
import types


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN204 - the signature of card.make.card
        from judgeaudit.card.make import card

        return card(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
