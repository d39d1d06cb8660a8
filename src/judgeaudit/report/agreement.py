"""Report section for human direction agreement (construct-validity.txt §4.2 Table 3, Appendix C).

Every number comes from an ``analyses.agreement.AgreementResult``; nothing is typed in.
"""

from __future__ import annotations

import pandas as pd

from judgeaudit.analyses.agreement import AgreementResult
from judgeaudit.report.html import Section, esc, table_html


def _cells(df: pd.DataFrame, key: str, pair_cols: list[str]) -> pd.DataFrame:
    out = pd.DataFrame({
        key: df[key],
        **({"axis": df["axis"]} if key == "slot" else {}),
        "n": df["n"],
        "agree": df["agree"],
        "Fleiss κ": df["fleiss_kappa"],
        **{c.replace("agree_", "pair ").replace("_", "–"): df[c] for c in pair_cols},
        "all differ": df["all_differ"],
        "usable": df["usable"],
        "yield": df["yield"],
        "cannot tell": df["cannot_tell_rate"],
        "facts differ": df["facts_differ_rate"],
        "human–verifier": df["verifier_agree"],
        "top category": [f"{d} {s:.0%}" if d else "—" for d, s in zip(df["dominant"], df["dominant_share"],
                                                                        strict=True)],
        "note": df["note"],
    })
    return out


def agreement_section(result: AgreementResult, title: str = "Human direction annotation") -> Section:
    """Table 3: per slot and per axis agreement, yield and the bar, with banners for excluded cells."""
    banners = []
    nm = result.not_measurable()
    if nm["slots"] or nm["axes"]:
        what = ", ".join([*nm["slots"], *(f"axis {a}" for a in nm["axes"])])
        banners.append(f"!Below the agreement bar of {result.bar:.2f} (raw pairwise): {what}. Reported as not "
                       "measurable and excluded from R, not reported with a wider interval.")
    flagged = result.per_slot.loc[result.per_slot["dominance_flag"], "slot"].tolist()
    if flagged:
        banners.append(f"One category holds ≥ {result.dominance:.0%} of the labels in: {', '.join(flagged)}; "
                       "κ is degenerate there, so the bar is on raw agreement.")
    if result.n_unlabelled:
        banners.append(f"{result.n_unlabelled} probe(s) carry fewer than two labels and are left out.")
    o = result.overall
    body = (f"<p>{o['n']} annotated pairs, {result.n_raters} annotators. Raw pairwise agreement "
            f"{o['agree']:.3f} (Fleiss' κ {o['fleiss_kappa']:.3f}, annotator pairs {o['pair_min']:.3f}–"
            f"{o['pair_max']:.3f}); {o['all_differ']} item(s) drew all-different answers; {o['usable']} of "
            f"{o['n']} carry a majority matching the intended direction.</p>"
            if o["n"] else "<p>No annotated pairs.</p>")
    body += "<h3>Per slot</h3>" + table_html(_cells(result.per_slot, "slot", result.pair_columns))
    body += "<h3>Per axis</h3>" + table_html(_cells(result.per_axis, "axis", result.pair_columns))
    legend = ("agree: raw pairwise agreement (the bar); usable: items whose strict-majority label matches the "
              "slot's intended direction; yield = usable / n; cannot tell and facts differ: shares of all labels; "
              "human–verifier: share of majority-labelled items where the verifier's own 'claims more' answer "
              "matches a majority of 'edited'.")
    body += f"<p class='note'>{esc(legend)}</p>"
    return Section(title=title, body=body, banners=banners)
