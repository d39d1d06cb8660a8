"""Closing the loop (blind-spot §3.5, §8): a responder revises its output on a regulator's report,
and a checker outside the loop scores every revision.

Modules, one job each: ``tasks`` (items, worlds, checkers), ``prompts`` (regulator and responder
prompts), ``keywords`` (free text → constraint ids), ``regulators`` (the arms), ``responders``
(initial outputs and revisions), ``engine`` (rounds through the call store), ``accounting``
(fixed/broken/net and their statistics, pure functions over tables), ``worlds`` (§9's seven
worlds), ``report`` (HTML).
"""
