"""The command line as a new user meets it: every mistake is one line and status 2, before any output;
options are named alike and all explained; long commands show progress only on a terminal."""

from __future__ import annotations

import argparse
import io

import pytest

from p2pcards.bench import KINDS
from p2pcards.cli import COMMANDS, load_command, main
from p2pcards.progress import Progress


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser and every benchmark's, by how a user types it."""
    found = {f"p2pcards {name}": load_command(name) for name in COMMANDS}
    for action in found["p2pcards bench"]._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update({p.prog: p for p in action.choices.values()})
    return found


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """A parser's options and positionals by name (help excluded)."""
    return {(a.option_strings or [a.dest])[-1]: a for a in parser._actions
            if not isinstance(a, argparse._HelpAction)}


BAD = [
    # the examples
    (["sim", "crescendo", "--cheat", "king-swap"], "king-swap is a cheat at crisp"),
    (["sim", "crescendo", "--cheat", "discard-king"], "discard-king is a cheat at crisp"),
    (["sim", "crisp", "--cheat", "wrong-special"], "wrong-special is a cheat at crescendo"),
    (["bench", "bots", "--games", "4", "--game", "crisp", "--crisp-players", "0"], "--crisp-players"),
    (["bench", "bots", "--crisp-players", "99"], "crisp seats 2 to 8 players, not 99"),
    (["bench", "bots", "--crescendo-players", "99"], "crescendo seats 2 to 6 players, not 99"),
    (["bench", "engine", "--seconds", "-1"], "--seconds"),
    (["bench", "engine", "--crisp-players", "99"], "crisp seats 2 to 8"),
    (["sim", "crisp", "--delay-ms", "-10"], "--delay-ms"),
    (["sim", "crisp", "--cheater", "2"], "--cheater: only with --cheat"),
    (["localgame", "crisp", "--limit", "0"], "--limit"),
    # and more, on every command
    (["bench"], "required"),
    (["bench", "chess"], "invalid choice"),
    (["bench", "engine", "--seconds", "nan"], "--seconds"),
    (["bench", "engine", "--players", "4"], "unrecognized arguments"),
    (["bench", "bots", "--games", "0"], "--games"),
    (["bench", "bots", "--jobs", "0"], "--jobs"),
    (["bench", "bots", "--game", "poker"], "invalid choice"),
    (["bench", "table", "--top", "-1"], "--top"),
    (["bench", "table", "--limit", "0"], "--limit"),
    (["bench", "table", "--crescendo-players", "7"], "crescendo seats 2 to 6"),
    (["bench", "crypto", "--repeat", "0"], "--repeat"),
    (["bench", "table", "--game", "crisp", "--crisp-players", "2", "--limit", "2000000"], "--limit: must be at most 1000000, not 2000000"),
    (["bench", "engine", "--game", "crescendo", "--crisp-players", "99", "--seconds", "0.01"], "crisp seats 2 to 8"),
    (["bench", "crypto", "--configs", "52x1"], "bad configuration"),
    (["bench", "net", "--peers", "1"], "--peers: 1: table sizes are 2 to 8 peers"),
    (["bench", "net", "--peers", "2,x"], "--peers wants numbers"),
    (["bench", "net", "--games", "poker"], "--games: poker"),
    (["bench", "net", "--limit", "0"], "--limit: must be at least 1, not 0"),
    (["bench", "net", "--slow", "11"], "--slow: 0 to 10 seconds, not 11"),
    (["botgame"], "required"),
    (["botgame", "chess"], "invalid choice"),
    (["botgame", "crisp", "--players", "9"], "crisp seats 2 to 8 players, not 9"),
    (["botgame", "crescendo", "--players", "7"], "crescendo seats 2 to 6 players, not 7"),
    (["botgame", "crisp", "--good", "5"], "--good"),
    (["botgame", "crisp", "--good", "-1"], "--good"),
    (["botgame", "crisp", "--delay", "-1"], "--delay"),
    (["botgame", "crisp", "--seed", "x"], "--seed"),
    (["sim", "crisp", "--players", "1"], "crisp seats 2 to 8 players, not 1"),
    (["sim", "crisp", "--jitter-ms", "-1"], "--jitter-ms"),
    (["sim", "crisp", "--delay-ms", "1e308"], "--delay-ms: must be at most 10000"),  # a game that could only fail
    (["sim", "crisp", "--jitter-ms", "10001"], "--jitter-ms: must be at most 10000"),
    (["sim", "crisp", "--limit", "-5"], "--limit"),
    (["sim", "crisp", "--good", "4"], "--good"),
    (["sim", "crisp", "--cheat", "bribe"], "no cheat 'bribe'"),
    (["sim", "crisp", "--cheat", ""], "no cheat ''"),
    (["sim", "crisp", "--faults", "drop=2"], "--faults: drop is a chance"),
    (["sim", "crisp", "--faults", "lag=3"], "--faults: 'lag=3' is not kind=value"),
    (["sim", "crisp", "--games", "0"], "--games"),
    (["sim", "crisp", "--tables", "65"], "--tables: at most 64"),  # each a process, all at once: a fork bomb
    (["sim", "crescendo", "--limit", "30"], "--limit: limit is not an option of crescendo"),
    (["sim", "crisp", "--tables", "2", "--good", "1"], "--good: not with --tables"),
    (["sim", "crisp", "--cheat", "out-of-turn", "--cheater", "7"], "--cheater"),
    (["sim", "crisp", "--cheat", "out-of-turn", "--good", "0"], "--good: not with --cheat"),
    (["localgame", "crescendo", "--players", "7"], "crescendo seats 2 to 6"),
    (["localgame", "crisp", "--good", "4"], "--good"),
    (["localgame", "crisp", "--seed", "1.5"], "--seed"),
    (["localgame", "crescendo", "--limit", "10"], "--limit is not an option of crescendo"),  # was dropped silently
    # --overwrite with no file to replace was ignored: the user meant a file that is not there
    (["sim", "crisp", "--players", "2", "--limit", "5", "--overwrite"], "--overwrite: only with --record or --json"),
    (["play", "--bots", "2", "--overwrite"], "--overwrite: only with --record"),
    (["play", "--overwrite"], "--overwrite: only with --record"),
    (["bench", "engine", "--game", "crisp", "--seconds", "0.01", "--overwrite"], "--overwrite: only with --json"),
    # a rulebook for a table no host can set up was printed without a word
    (["rules", "crisp", "--limit", "7"], "--limit: invalid choice: 7 (choose from 50, 100, 150)"),
    (["rules", "crisp", "--limit", "0"], "--limit: invalid choice: 0"),
    (["sim", "crisp", "--limit", "2000000"], "--limit: must be at most 1000000, not 2000000"),
    (["scenario"], "required"),
    (["scenario", "/nonexistent/file.json"], "cannot read"),
    (["id", "--name", ""], "name"),
    (["id", "--colour", "red"], "unrecognized arguments"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_on_stderr_and_status_2(argv: list[str], message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "", "nothing may be printed before an error"
    assert captured.err.count("\n") == 1 and captured.err.startswith("p2pcards "), captured.err
    assert message in captured.err, captured.err


def test_every_option_of_every_command_is_explained() -> None:
    for prog, parser in parsers().items():
        for name, action in options(parser).items():
            assert action.help and action.help != argparse.SUPPRESS, f"{prog} {name} has no help"


def test_every_option_with_a_default_says_it_in_its_help() -> None:
    # `sim --games` (1) and `rules --limit` (100) / `--draw-seconds` (no limit) left a user to guess.
    for prog, parser in parsers().items():
        for name, action in options(parser).items():
            if action.option_strings and action.default not in (None, False, []) or (prog, name) in (
                    ("p2pcards rules", "--limit"), ("p2pcards rules", "--draw-seconds"), ("p2pcards play", "--bots")):
                assert "default" in (action.help or ""), f"{prog} {name}"


def test_a_limit_option_says_what_it_does_and_which_values_it_takes() -> None:
    # `sim --help` said "Crisp's game limit": a limit of what, and which numbers?
    for prog, allowed in (("p2pcards sim", "any whole number from 1 to 1000000"),
                          ("p2pcards localgame", "any whole number from 1 to 1000000"),
                          ("p2pcards bench net", "any whole number from 1 to 1000000"),
                          ("p2pcards bench table", "any whole number from 1 to 1000000"),
                          ("p2pcards rules", "50, 100 or 150")):
        words = " ".join((options(parsers()[prog])["--limit"].help or "").split())
        assert "the game ends at the end of the round" in words and allowed in words, (prog, words)


def test_the_commands_that_play_one_game_agree_on_their_options() -> None:
    defaults = {}
    for name in ("botgame", "sim", "localgame"):
        found = options(load_command(name))
        assert {"game", "--players", "--good", "--seed"} <= found.keys(), name
        defaults[name] = {opt: found[opt].default for opt in ("--players", "--seed")}
    assert defaults["botgame"] == defaults["sim"] == defaults["localgame"] == {"--players": 3, "--seed": None}


def test_the_benchmarks_name_their_tables_alike() -> None:
    for kind in ("engine", "bots", "table"):
        found = options(parsers()[f"p2pcards bench {kind}"])
        assert {"--game", "--crisp-players", "--crescendo-players"} <= found.keys(), kind
    every = {opt for parser in parsers().values() for opt in options(parser)}
    assert not any(opt.startswith("--players-") for opt in every)


def test_bench_help_lists_the_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--help"]) == 0
    out = capsys.readouterr().out
    for kind, (_, help_text) in KINDS.items():
        assert f"    {kind} " in out
    assert "rest" not in out


def test_sim_help_says_which_cheats_fit_which_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:3] == ["king-swap", "crisp", "swaps"] for line in lines if line.strip())
    assert any(line.split()[:3] == ["wrong-special", "crescendo", "a"] for line in lines if line.strip())
    assert any(line.split()[:4] == ["lying-share", "crisp", "or", "crescendo"] for line in lines if line.strip())


def test_no_help_points_outside_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    for prog, parser in parsers().items():
        text = parser.format_help()
        assert "shared/" not in text and "../" not in text, prog
    assert "docs/scenarios.md" in load_command("scenario").format_help()


class Terminal(io.StringIO):
    """Standard output as a terminal would be."""

    def isatty(self) -> bool:
        return True


def test_progress_draws_in_place_on_a_terminal_and_clears_itself() -> None:
    out = Terminal()
    with Progress("games", total=4, out=out) as progress:
        progress.update(1, "one done")
        progress.print("a result")
        progress.update(2, "two done")  # within 0.1 s of the last: not drawn
        progress.update(3, "three done", force=True)
    text = out.getvalue()
    assert "\r\x1b[Kgames  [######------------------]  25%" in text and "one done" in text
    assert "two done" not in text and "three done" in text
    assert "\r\x1b[Ka result\n" in text
    assert text.endswith("\r\x1b[K")


def test_progress_is_silent_when_not_a_terminal() -> None:
    out = io.StringIO()
    with Progress("games", total=4, out=out) as progress:
        progress.update(1, force=True)
        progress.print("a result")
        with progress.ticking(lambda: "busy"):
            pass
    assert out.getvalue() == "a result\n"


def test_sim_shows_its_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Terminal()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("p2pcards.progress.EVERY", 0.0)
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "3"]) == 0
    text = out.getvalue()
    assert "sim crisp  [" in text and "highest total" in text
    assert "round 1 begins" in text and "sim crisp, 2 players, seed 3" in text


def test_piped_output_has_no_progress(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "3"]) == 0
    assert main(["bench", "bots", "--games", "3", "--jobs", "1", "--game", "crisp"]) == 0
    out = capsys.readouterr().out
    assert "\r" not in out and "\x1b" not in out and "round 1 begins" in out and "win rate" in out


def test_a_game_without_a_seed_prints_the_one_it_used(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["botgame", "crisp", "--players", "2"]) == 0
    out = capsys.readouterr().out
    seed = int(out.rsplit("(seed ", 1)[1].split(";")[0])
    assert main(["botgame", "crisp", "--players", "2", "--seed", str(seed)]) == 0
    assert capsys.readouterr().out == out


@pytest.mark.slow
def test_localgame_takes_a_seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["localgame", "crisp", "--players", "2", "--limit", "10", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "(seed 5)" in out and out.count("finished") == 2
