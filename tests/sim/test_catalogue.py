"""The cheat catalogue: each cheat is caught as the catalogue says, with the blame on the cheater, in every game it fits."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from p2pcards.bots.base import View
from p2pcards.cli import main
from p2pcards.games.base import Move
from p2pcards.sim.batch import batch_json, play_batch, report_from, report_lines
from p2pcards.sim.catalogue import CATALOGUE, CheatKind, _bot, judge, turned_legal
from p2pcards.sim.memnet import LinkModel
from p2pcards.sim.outcome import Outcome
from p2pcards.sim.transcript import Transcript, record, verify
from p2pcards.table.outputs import Claim, Note

CRISP = {"limit": 30}


def options(game: str) -> dict[str, int]:
    return CRISP if game == "crisp" else {}


# One cheat of each expected outcome, on Crisp: quick enough for every test run.
@pytest.mark.parametrize("kind", ["small-order-key", "pass-duplicate", "two-passes", "chatter-stall",
                                  *(pytest.param(k, marks=pytest.mark.slow) for k in ("forged-signature", "out-of-turn"))])
def test_a_cheat_of_each_outcome_is_caught_with_the_right_blame(kind: str) -> None:
    [report] = play_batch("crisp", 3, CRISP, 1, 1, cheat=CATALOGUE[kind], cheater=1, timeout=3.0, until=200.0)
    assert report.fired, kind
    assert report.verdict is None, report.verdict
    assert report.ok and report.agreed
    expect = CATALOGUE[kind].expect
    for blames in report.blamed.values():
        if expect == "void":
            assert blames[0] == "p1"
        elif expect == "rejected":
            assert "p1" in blames
        else:
            assert "p1" not in blames


def test_a_bad_pass_is_blamed_by_every_honest_peer_even_one_a_report_reaches_before_the_pass() -> None:
    # Seed 1005 at 5 seats: p3 gets p1's bad pass before p0's and finds it once p0's comes; p4 gets p3's report
    # before p1's pass. The report carried p0's pass only, so p4 blamed no one on p3's word (the run failed).
    [report] = play_batch("crisp", 5, CRISP, 1005, 1, cheat=CATALOGUE["pass-substitute"], cheater=1)
    assert report.fired and report.verdict is None, report.verdict
    assert report.fault_blame == {"p0": "p1", "p2": "p1", "p3": "p1", "p4": "p1"} and not report.fault_claim


def test_a_report_held_ahead_of_its_chain_is_the_evidence_of_the_stop_it_leads_to() -> None:
    # Seed 9 at 8 seats, 50 ms of jitter: p3 gets p0's report before p0's box before it, and stops once the box
    # comes; its report carried that box (the frame in hand), not p0's report, so p6, reached by p3's report
    # first, blamed nobody at all (sim: 'the honest peers disagreed'). Now p6 weighs p0's report itself.
    [report] = play_batch("crisp", 8, CRISP, 9, 1, cheat=CATALOGUE["lying-share"], cheater=1,
                          link=LinkModel(0.004, 0.050))
    assert report.fired and report.verdict is None and report.agreed, report.verdict
    assert all(b == "p1" or report.fault_claim[p] == {"reporter": "p0", "blames": "p1"}
               for p, b in report.fault_blame.items())


@pytest.mark.slow
def test_a_peer_whose_own_audit_found_the_fault_blames_by_it_when_a_report_comes_before_the_last_results() -> None:
    # Seed 23 at 8 seats, 60 ms of jitter: p6 has every result, all naming p1's swapped King, and stops; p7 and p2
    # get its report (or p7's, carrying it) before p3's result. Both had audited the round and found p1 themselves,
    # yet blamed nobody, on p6's word only (sim: 'NOT CAUGHT'). Now their own audit is their verdict.
    [report] = play_batch("crisp", 8, CRISP, 23, 1, cheat=CATALOGUE["king-swap"], cheater=1,
                          link=LinkModel(0.004, 0.060))
    assert report.fired and report.verdict is None and report.agreed, report.verdict
    assert set(report.fault_blame.values()) == {"p1"} and not report.fault_claim


def test_a_withheld_share_of_a_card_face_up_is_blamed_on_its_withholder_not_on_a_grant_waiting_for_its_face() -> None:
    # p1 draws a Jack and peeks with it: p0, who has not seen the Jack, must learn it from everyone's public share
    # before it grants the peek, and p2 withholds its share. p1, who saw the Jack, owes p2 nothing and sees p0
    # owe it a private box: p2 is still the one that holds the table up (protocol.md §12.4).
    [report] = play_batch("crisp", 3, CRISP, 1, 1, cheat=CATALOGUE["withhold-public"], cheater=2, timeout=3.0,
                          until=200.0)
    assert report.fired and report.verdict is None, report.verdict
    assert report.blamed == {"p0": ["p2"], "p1": ["p2"]}


def test_a_split_view_by_the_orderer_is_blamed_by_every_seat() -> None:
    # p0 orders, so nobody relays its frames: p2, given the other version of its move, finds only that p0's next
    # frame does not follow it, and its report carries both frames, so p1 finds the equivocation itself.
    [report] = play_batch("crisp", 3, CRISP, 11, 1, cheat=CATALOGUE["split-view"], cheater=0, timeout=3.0, until=200.0)
    assert report.fired and report.verdict is None, report.verdict
    assert report.blamed == {"p1": ["p0"], "p2": ["p0"]}


@pytest.mark.slow  # every cheat, in every game it fits, over a seeded batch
@pytest.mark.parametrize("kind, game", [(k, g) for k, c in CATALOGUE.items() for g in c.games])
def test_every_cheat_is_caught_in_every_game_of_a_seeded_batch(kind: str, game: str) -> None:
    # Each game's transcript goes to a witness too: it must name the fault and the cheater from the
    # public frames alone. A box withheld from one seat is a stall a witness cannot time (a transcript
    # has no clock past its last frame), so there it names whom the game waits on.
    cheat = CATALOGUE[kind]
    latest: list[Transcript] = []
    transcripts: list[Transcript] = []
    # Two games of Crisp, one of Crescendo (three times as long): every cheat fires in each, as asserted below.
    reports = play_batch(game, 3, options(game), 1, 2 if game == "crisp" else 1, cheat=cheat, cheater=1, timeout=3.0, until=400.0,
                         prepare=lambda net, peers: latest.__setitem__(slice(None), [record(net, peers[0].cfg)]),
                         on_game=lambda report, run: transcripts.append(latest[0]))
    for r, transcript in zip(reports, transcripts, strict=True):
        assert r.fired and r.verdict is None, (r.seed, r.verdict)
        assert r.agreed
        if cheat.expect not in ("void", "rejected"):
            continue
        verdict = verify(transcript)
        w = verdict.witness
        assert w is not None
        blames = [n.blame for n in w.notes if n.blame]
        if cheat.expect == "rejected":
            assert verdict.ok and "p1" in blames
        else:
            assert not verdict.ok
            # (a lie in a box sealed to one seat is that seat's word only, to a witness as to a peer: protocol.md §14)
            first = w.faults[0] if w.faults else None
            assert (first is not None and (first.blame == "p1" or (
                first.blame is None and first.claim is not None and first.claim.blames == "p1"))) \
                or verdict.lines[-1].startswith("INCOMPLETE"), verdict.lines


def test_a_cheat_caught_otherwise_than_the_catalogue_says_fails_the_run(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # A catalogue entry that expects the wrong outcome: the report must say NOT CAUGHT and the exit status 1.
    wrong = dataclasses.replace(CATALOGUE["small-order-key"], name="wrong", expect="rejected")
    monkeypatch.setitem(CATALOGUE, "wrong", wrong)
    assert main(["sim", "crisp", "--cheat", "wrong", "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "NOT CAUGHT: p0 did not finish" in out


def test_cheat_list_is_one_line_per_cheat(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--cheat", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(CATALOGUE)


@pytest.mark.parametrize("argv, err", [
    (["sim", "crescendo", "--cheat", "king-swap"], "--cheat king-swap is a cheat at crisp; at crescendo:"),
    (["sim", "crisp", "--cheat", "number-unheld"], "--cheat number-unheld is a cheat at crescendo"),
    (["sim", "crisp", "--cheat", "nothing"], "--cheat: no cheat 'nothing'"),
    (["sim", "--cheat", "out-of-turn"], "the game: crisp or crescendo"),
    (["sim", "crisp", "--games", "2", "--record", "x"], "--record: one game only"),
    (["sim", "crisp", "--cheater", "1"], "--cheater: only with --cheat"),
    (["sim", "crisp", "--cheat", "pass-mark", "--cheater", "0"], "seat 0 shuffles first, from the public deck"),
    (["sim", "crescendo", "--players", "4", "--cheat", "bad-stamp", "--cheater", "3"],
     "crescendo's 3 rounds are dealt by seats 0 to 2: seat 3 never orders one"),
])
def test_a_cheat_that_does_not_fit_is_one_line_and_status_2(argv: list[str], err: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out = capsys.readouterr().err
    assert out.count("\n") == 1 and err in out


def test_a_batch_reports_every_game_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    assert main(["sim", "crisp", "--cheat", "pass-mark", "--games", "2", "--seed", "5", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "caught in 2/2 games" in out and "honest peers agreed on every result: yes (2/2 games)" in out
    data = json.loads(path.read_text())
    assert data["summary"]["games"] == 2 and data["summary"]["ok"]
    assert [g["seed"] for g in data["games"]] == [5, 6]
    assert all(g["blamed"]["p0"][0] == "p1" and g["blamed"]["p2"][0] == "p1" for g in data["games"])
    assert all(len(g["cpu_s"]) == 3 and g["frames"] > 0 for g in data["games"])
    # the report names all that shapes a game, to run it again: the bots (a cheating table's are random) and links
    assert {k: data["params"][k] for k in ("good", "delay_ms", "jitter_ms", "options")} == \
        {"good": 0, "delay_ms": 4.0, "jitter_ms": 12.0, "options": {"limit": 30}}


def test_a_rejected_cheat_is_caught_only_by_the_rejection_of_its_own_move() -> None:
    # The cheater's random bot also loses races (a NUMBER claim after another): the rules reject those with
    # blame on it. That is no proof that the cheating move was refused: the judge must find that move's rejection.
    honest = [Outcome("p0", True, None, (1, 2, 3), (0,), 1,
                      (Note("rejected", "p1 number 6: only one NUMBER claim between one turn and the next", "p1"),), ())]
    assert judge(honest, "p1", "rejected", ["p1 lock 0"]) is not None
    assert judge(honest, "p1", "rejected", []) is not None
    caught = [dataclasses.replace(honest[0], notes=honest[0].notes + (Note("rejected", "p1 lock 0: no lock", "p1"),))]
    assert judge(caught, "p1", "rejected", ["p1 lock 0"]) is None


def test_a_cheating_move_that_a_race_made_legal_had_no_chance() -> None:
    # Crescendo, seed 6: the cheater drew from the Reserve while p0's setup swap was on its way; the orderer placed
    # the draw after that swap, on p1's own turn, so the table took it as legal. The sim said "NOT CAUGHT: p0
    # never rejected the cheating move": it was no cheat where it was ordered, so the next seed must be tried.
    draw = Move("p1", "draw", source="reserve")
    assert turned_legal([draw], [draw], [])
    assert not turned_legal([draw], [draw], [Note("rejected", "p1 draw reserve: not your turn", "p1")])
    assert not turned_legal([draw], [], [])  # legal already when sent: a cheat that is no cheat, not a race
    assert not turned_legal([], [], [])


@pytest.mark.slow  # a few whole Crescendo games
def test_a_cheat_that_a_race_made_legal_is_tried_again_on_the_next_seed() -> None:
    [report] = play_batch("crescendo", 3, {}, 6, 1, cheat=CATALOGUE["out-of-turn"], cheater=1, timeout=5.0,
                          until=1800.0)
    assert report.seed > 6 and report.fired and report.verdict is None, (report.seed, report.verdict)


def _legal_move(view: View) -> Move | None:
    """No cheat at all: the first legal move of its own turn."""
    if view.turn != view.me or view.over:
        return None
    return next((m for m in view.legal if m.action not in ("number", "number_tie")), None)


@pytest.mark.slow  # a whole Crescendo game
def test_a_cheating_move_that_is_legal_is_not_caught() -> None:
    # At this seed the cheater's random bot loses a NUMBER race (rejected, blamed on p1): the "cheat" is a legal
    # move, so it must not count as caught.
    legal = CheatKind("legal", ("crescendo",), "a legal move", "rejected", _bot(_legal_move))
    [report] = play_batch("crescendo", 3, {}, 1, 1, cheat=legal, cheater=1, timeout=5.0, until=300.0)
    assert report.fired
    assert report.verdict is not None and "never rejected the cheating move of p1" in report.verdict
    assert not report.ok


def test_a_cheat_with_no_chance_says_what_would_give_it_one() -> None:
    done = [Outcome(f"p{i}", True, None, (1, 2, 3), (0,), 1, (), ()) for i in range(3)]
    traffic = {"moves": 0, "frames": 0, "bytes": 0, "wall_s": 0.0, "table_s": 0.0, "cpu_s": [0.0] * 3}
    report = report_from(done, 30, CATALOGUE["bad-stamp"], 2, fired=False, **traffic)
    assert report.verdict == f"the cheat had no chance ({CATALOGUE['bad-stamp'].chance})"
    assert "--limit" in report.verdict
    assert report_from(done, 30, CATALOGUE["king-swap"], 2, fired=False, **traffic).verdict == "the cheat had no chance"


def stopped(name: str, blame: str | None, detail: str, claim: Claim | None = None) -> Outcome:
    """An honest peer that stopped the table on one fault."""
    return Outcome(name, False, "stopped", (0, 0, 0), (0,), 1, (), (Note("fault", detail, blame, claim),))


def test_a_lie_in_a_box_may_reach_a_peer_as_the_reporters_word_only() -> None:
    # Over TCP the report of the seat that opened a lying box can reach a third seat before its own box does:
    # that seat stops blaming no one, naming p1 on the reporter's word (protocol.md §14, step 4).
    seen = stopped("p0", "p1", "a box from p1 holds shares whose proofs fail")
    word = stopped("p2", None, "p0 stopped the table, blaming p1 on its word only: a box from p1 holds bad shares",
                   Claim("p0", "p1"))
    assert CATALOGUE["lying-share"].expect == "void-claim"
    assert judge([seen, word], "p1", "void-claim") is None
    assert judge([seen, word], "p1", "void") is not None  # where everyone sees the fault, a word is not enough
    assert judge([word, dataclasses.replace(word, name="p0")], "p1", "void-claim") == \
        "no honest peer found the fault of p1 itself"
    other = stopped("p2", None, "p0 stopped the table, blaming p3 on its word only: …", Claim("p0", "p3"))
    assert judge([seen, other], "p1", "void-claim") is not None
    # The words alone are no claim: the judge reads the claim, which every JSON output gives (fault_claim here).
    assert judge([seen, stopped("p2", None, word.faults[0].detail)], "p1", "void-claim") is not None


def test_the_sims_json_and_report_give_a_claim_on_the_reporters_word_apart_from_a_blame() -> None:
    seen = stopped("p0", "p1", "a box from p1 holds shares whose proofs fail")
    word = stopped("p2", None, "p0 stopped the table, blaming p1 on its word only: bad shares", Claim("p0", "p1"))
    traffic = {"moves": 0, "frames": 0, "bytes": 0, "wall_s": 0.0, "table_s": 0.0, "cpu_s": [0.0] * 3}
    report = report_from([seen, stopped("p1", None, "lied"), word], 30, CATALOGUE["lying-share"], 1, fired=True,
                         **traffic)
    assert report.verdict is None and report.fault_blame == {"p0": "p1", "p2": None}
    # Both name p1: the honest peers agree, and the run passes (it failed as "the honest peers disagreed").
    assert report.agreed and report.ok
    other = stopped("p2", None, "p0 stopped the table, blaming p3 on its word only: …", Claim("p0", "p3"))
    assert not report_from([seen, stopped("p1", None, "lied"), other], 30, CATALOGUE["lying-share"], 1, fired=True,
                           **traffic).agreed
    game = batch_json({}, [report])["games"][0]
    assert game["fault_claim"] == {"p2": {"reporter": "p0", "blames": "p1"}}
    assert "p2 blamed nobody (p0 blamed p1, on its word only)" in report_lines([report], CATALOGUE["lying-share"])[-1]
    # Over tcp a seat process hands its outcome over as JSON: the claim comes through it.
    assert Outcome.from_json(json.loads(json.dumps(word.to_json()))) == word


@pytest.mark.slow
def test_a_cheat_of_the_orderer_from_a_late_seat_gets_a_game_long_enough_for_its_seat_to_deal(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Seat 2 deals round 3: at the cheating table's old limit of 30 a Crisp game ends after a round or two, so
    # bad-stamp from seat 2 had no chance in any of 30 seeds. Its default limit is now one that reaches round 3.
    assert main(["sim", "crisp", "--cheat", "bad-stamp", "--cheater", "2", "--seed", "1", "--quiet", "--json", "-"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["params"]["options"] == {"limit": 90} and data["params"]["cheater"] == 2
    [game] = data["games"]
    assert game["seed"] == 1 and game["fired"] and game["verdict"] is None and game["rounds"] >= 3
    assert game["fault_blame"] == {"p0": "p2", "p1": "p2"} and "caught in 1/1 games" in err


def test_the_help_says_up_front_which_seat_a_cheat_of_the_orderer_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--help"]) == 0
    text = capsys.readouterr().out
    orders = [k for k, c in CATALOGUE.items() if c.orders]
    assert orders == ["early-timeout", "bad-stamp"]
    for line in text.splitlines():
        if line.split()[:1] in ([k] for k in orders):
            assert "only in a round its seat deals (seat S deals round S + 1" in line, line
    assert "round SEAT + 1" in " ".join(text.split())  # --cheater says it too


def test_the_help_explains_every_outcome_the_catalogue_expects(capsys: pytest.CaptureFixture[str]) -> None:
    """lying-share expects "void-claim", which the help's legend once left out."""
    assert main(["sim", "--help"]) == 0
    legend = capsys.readouterr().out.split("cheats (--cheat KIND)")[1].split("):")[0]
    for expect in {k.expect for k in CATALOGUE.values()}:
        assert f" {expect}: " in legend or f"({expect}: " in legend, expect


def test_a_cheat_waiting_for_a_drawn_king_draws_from_the_pile_and_never_calls_the_round() -> None:
    """`sim crisp --cheat discard-king --players 8 --transport tcp` ran for 900 s: at an 8-seat table to 30 points
    (two short rounds) the cheater's random bot drew about twice a game, half the time from the discard and now and
    then called CRISP itself, so its chance (a King drawn from the pile) came in one game of eight or so, each
    a game of 8 processes. Waiting for it, the cheater now draws from the pile on each turn and calls no round."""
    import random

    from p2pcards.bots.base import RandomBot
    from p2pcards.cards import CRISP_DECK
    from p2pcards.games.crisp import CrispGame, CrispOptions
    from p2pcards.sim.cheaters import CheatBot

    for kind in ("discard-king", "king-swap"):
        assert CATALOGUE[kind].rig(1, 8)["cheat_seek"] is not None
    no_kings = [c for c in CRISP_DECK if c[:-1] != "K"] + [c for c in CRISP_DECK if c[:-1] == "K"]
    for seed in range(20):
        game = CrispGame([f"p{i}" for i in range(3)], CrispOptions(crisp_window_s=3, next_start_s=1))
        game.queue_deck(no_kings)
        r = game.r
        assert r is not None and r.turn is not None
        me = game.players[r.turn]
        rig = CATALOGUE["discard-king"].rig(1, 3)
        bot = CheatBot(RandomBot(random.Random(seed), 1.0), rig["cheat"], seek=rig["cheat_seek"])
        assert bot.choose(game.view(me)) == Move(me, "draw", source="pile")
        game.apply(Move(me, "draw", source="pile"))
        game.apply(Move(me, "discard"))
        assert any(m.action == "crisp" for m in game.view(me).legal)  # a random bot would call it, always
        assert bot.choose(game.view(me)) is None and not bot.fired


def test_whom_each_honest_peer_rejected_reads_apart_from_the_next_peer() -> None:
    # `sim crescendo --players 4 --cheat out-of-turn --cheater 2` read "p0 rejected moves of p1, p2, p3, p1 rejected
    # moves of p1, p2, p3, …": the seats one peer rejected ran into the next peer.
    from p2pcards.sim.batch import GameReport

    r = GameReport(seed=11, rounds=1, moves=9, frames=90, bytes=9000, wall_s=1.0, table_s=30.0, cpu_s=[0.1] * 4,
                   agreed=True, ended={"p0": "finished", "p1": "finished", "p3": "finished"},
                   blamed={"p0": ["p3", "p2", "p1"], "p1": ["p2"], "p3": []}, fault_blame={},
                   totals={"p0": [1, 2, 3, 4], "p1": [1, 2, 3, 4], "p3": [1, 2, 3, 4]},
                   cheat="out-of-turn", cheater=2, fired=True)
    assert report_lines([r], CATALOGUE["out-of-turn"])[-1] == (
        "  seed 11: caught; p0 rejected moves of p1, p2 and p3; p1 rejected moves of p2; p3 rejected moves of nobody")


@pytest.mark.slow
def test_a_peer_restarted_by_a_fault_need_not_have_noted_the_dropped_forgery() -> None:
    # `sim crisp --players 4 --cheat forged-signature --faults restart=2 --seed 5`: p3 was down when the forgeries
    # came (and a peer back from its journal holds no note from before): "NOT CAUGHT: p3 never noted the dropped
    # frame", while p0 and p2 dropped them blaming no one.
    from p2pcards.sim.faults import FaultSpec

    [report] = play_batch("crisp", 4, {"limit": 30}, 5, 1, cheat=CATALOGUE["forged-signature"],
                          faults=FaultSpec.parse("restart=2"), timeout=5.0, until=300.0)
    assert report.faults == {"restart": 1} and report.fired
    assert report.verdict is None and report.ok


def test_a_restarted_peer_is_still_judged_on_what_it_blamed_and_others_on_what_they_noted() -> None:
    def finished(name: str, *notes: Note) -> Outcome:
        return Outcome(name, True, None, (1, 2, 3), (0,), 1, notes, ())

    dropped = Note("rejected", "message dropped: bad signature")
    expect = CATALOGUE["forged-signature"].expect
    assert judge([finished("p0", dropped), finished("p2")], "p1", expect, restarted=["p2"]) is None
    assert judge([finished("p0"), finished("p2")], "p1", expect, restarted=["p2"]) == "p0 never noted the dropped frame"
    wrong = Note("rejected", "message dropped: bad signature", "p0")
    assert judge([finished("p0", dropped), finished("p2", wrong)], "p1", expect,
                 restarted=["p2"]) == "p2 blamed ['p0'] for a frame it dropped"
    assert judge([finished("p2")], "p0", expect, restarted=["p2"]) == \
        "every honest peer restarted (p2): none is left to show it noted it"
