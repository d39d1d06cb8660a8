"""A small study for the annotation-app tests: six pairs, one with markup in its text, one with
curly quotes, en dashes and a non-breaking hyphen."""

from __future__ import annotations

from judgeaudit.records import Probe

EVIDENCE = "A single-basin study (2019\u20132021) found forecast error fell by 9% with the method."

PAIRS = [
    ("hedging_removal", "The method may reduce forecast error in this basin.",
     "The method reduces forecast error in this basin."),
    ("population_widening", "In this basin the method lowered error by 9%.",
     "In all river basins the method lowered error by 9%."),
    ("register_shift", "The method cut forecast error by 9% in this basin.",
     "In this basin, the method decreased forecast error by 9%."),
    ("intensifier_addition", "The \u201cnew\u201d method lowered error by 9% in 2019\u20132021 in a "
     "non\u2011tidal basin.",
     "The \u201cnew\u201d method markedly lowered error by 9% in 2019\u20132021 in a non\u2011tidal basin, "
     "substantially so."),
    ("reordering", "<script>window.__pwned=1</script>In this basin, error fell by 9%.",
     "Error fell by 9% in this basin.<img src=x onerror=\"window.__pwned=1\">"),
    ("domain_extension", "The method lowered forecast error in this basin.",
     "The method lowered forecast error in basins and estuaries."),
]


def study_probes() -> list[Probe]:
    return [Probe(probe_id=f"b{i}__{slot}", base_id=f"b{i}", group="g", domain="hydro", criterion="c",
                  evidence=EVIDENCE, original=o, edited=e, slot=slot) for i, (slot, o, e) in enumerate(PAIRS)]
