"""How a peer weighs another peer's fault report, once its evidence is taken, sans-IO (protocol.md §14).

A wait of our own that has lasted is evidence we hold; a wait of a moment is only traffic in
flight. A time-out is a claim we can weigh: what a seat owes is public, so one our own view does
not see owed is the reporter's view, not ours. Whatever nothing we hold bears out (a box sealed
to the reporter, its clock, its links) stops the table with the blame shown as the reporter's word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .bodies import Fault
from .outputs import Claim


@dataclass(frozen=True)
class View:
    """What we hold beside the report: the seats we waited on long enough to count (and what they owe),
    the seats we wait on now, and whether our network layer misses a seat now."""

    waited: Sequence[int]
    owed: Sequence[int]
    missing: Callable[[int], bool]
    what: str = ""  # what the seats we waited on owe, as " (…)", or nothing


def weigh(names: Sequence[str], reporter: int, report: Fault, view: View) -> tuple[str, int | None, Claim | None]:
    """Our own fault in answer to `reporter`'s report: its detail, whom we blame, and the report's claim when we
    blame no one on its word only (protocol.md §14, 2 to 4)."""
    waiting = list(view.waited)
    if not waiting and report.stall and report.blame not in view.owed and reporter in view.owed:
        waiting = [reporter]  # a time-out we do not see, from the seat we wait on: it stalls us itself
    who = names[reporter]
    if waiting:
        return (f"{who} stopped the table ({report.why}); we were waiting on "
                f"{', '.join(names[s] for s in waiting)}{view.what}", waiting[0], None)
    if report.stall and report.blame in view.owed or report.blame is None or view.missing(report.blame):
        return f"{who} stopped the table: {report.why}", report.blame, None
    claim = Claim(who, names[report.blame])
    return f"{who} stopped the table, blaming {claim.blames} on its word only: {report.why}", None, claim
