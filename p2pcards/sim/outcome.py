"""How one simulated peer ended, as the sim judges it: taken from a `TablePeer` in this process, or
from the JSON summary of a seat process (`p2pcards sim --transport tcp`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..table.outputs import Claim, Cut, Note
from ..table.peer import TablePeer

JUDGED = ("rejected", "fault", "audit")  # the notes a verdict reads: those that may blame a seat


@dataclass(frozen=True)
class Outcome:
    """One peer at the end of a game: finished or why it stopped, its totals and winners, the notes that blame."""

    name: str
    finished: bool
    stopped: str | None
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    rounds: int
    notes: tuple[Note, ...]  # its notes of the JUDGED kinds, in order
    faults: tuple[Note, ...]
    voted_out: str | None = None  # the other seats voted us out (while we were cut off, say): they went on without us
    waiting: str | None = None  # what held it up when the run ended, if it neither finished nor stopped
    gave_up: Cut | None = None  # it gave the table up cut off from every other seat (protocol.md §14.9): how

    @classmethod
    def of(cls, peer: TablePeer) -> Outcome:
        """The outcome of a peer in this process."""
        return cls(peer.names[peer.me], peer.finished, peer.stopped, tuple(peer.game.totals), tuple(peer.game.winners),
                   peer.round, tuple(n for n in peer.notes if n.kind in JUDGED), tuple(peer.faults),
                   peer.seating.voted_out,
                   None if peer.finished or peer.stopped is not None else peer.waiting(), peer.gave_up)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able map (what a seat process prints)."""
        return {"name": self.name, "finished": self.finished, "stopped": self.stopped, "totals": list(self.totals),
                "winners": list(self.winners), "rounds": self.rounds,
                "notes": [_note_json(n) for n in self.notes], "faults": [_note_json(n) for n in self.faults],
                "voted_out": self.voted_out, "waiting": self.waiting,
                "gave_up": None if self.gave_up is None else self.gave_up.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        """Back from `to_json`."""
        return cls(data["name"], data["finished"], data["stopped"], tuple(data["totals"]), tuple(data["winners"]),
                   data["rounds"], tuple(_note(n) for n in data["notes"]), tuple(_note(n) for n in data["faults"]),
                   data.get("voted_out"), data.get("waiting"),
                   None if data.get("gave_up") is None else Cut[data["gave_up"]])

    @property
    def ended(self) -> str:
        """How it ended, in words: voted out, "finished", why it stopped, or what still held it up at the run's end."""
        if self.voted_out:
            return f"voted out: {self.voted_out}"
        if self.finished:
            return "finished"
        return self.stopped or "still waiting" + (f" ({self.waiting})" if self.waiting else "")

    @property
    def named(self) -> str | None:
        """The seat its first fault names: the one it blames, or the one a report it stopped on blames (a peer
        that a seat's report reached before its own check could stops on the report's word, protocol.md §14)."""
        if not self.faults:
            return None
        first = self.faults[0]
        return first.blame if first.blame is not None or first.claim is None else first.claim.blames

    @property
    def blames(self) -> list[str]:
        """Every seat it blamed, in order (rejected moves, dropped frames, audits and faults)."""
        return [n.blame for n in self.notes if n.blame is not None]


def _note_json(note: Note) -> list[Any]:
    """A note as a seat process prints it: [kind, detail, blame, claim or null]."""
    return [note.kind, note.detail, note.blame, None if note.claim is None else note.claim.to_json()]


def _note(data: list[Any]) -> Note:
    """Back from `_note_json`."""
    kind, detail, blame, claim = data
    return Note(kind, detail, blame, None if claim is None else Claim(claim["reporter"], claim["blames"]))


def agreed(outcomes: Sequence[Outcome]) -> bool:
    """Every peer finished with the same totals and winners, or every one stopped naming the same seat first; a peer
    that gave up cut off from every other seat, or that the others voted out (protocol.md §14.9), holds no outcome to
    agree with or to contradict."""
    outcomes = [o for o in outcomes if o.gave_up is None and o.voted_out is None] or outcomes
    if all(o.finished for o in outcomes):
        return len({(o.totals, o.winners) for o in outcomes}) == 1
    if all(o.stopped is not None for o in outcomes):
        return len({o.named for o in outcomes}) == 1
    return False
