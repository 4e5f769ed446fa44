"""`p2pcards peer`: one headless peer played by a bot: it announces itself, creates or joins a table, plays.

`run_bot_peer` runs one such peer in the running event loop (tests run several in one loop, sharing
one `Discovery`); `run` is the command, which the client's `--bots N` starts N times as processes.
SIGTERM and Ctrl-C cancel it; leaving by any path sends the goodbyes (see `Node`). Exit status: 0 when
the game finished or the peer quit saying goodbye; 1 when the table stopped, every other seat voted it
out, or no link could be made; 2 for a bad option or a state directory it cannot use; 3 when every other
seat went missing at once (its own network lost, most likely) and the game did not finish for it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import resource
import secrets
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ..bots.base import Bot, RandomBot
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..crypto.identity import MAX_NAME, Identity, generate, valid_name
from ..errors import InputError, LinkBroken, LocalError
from ..cli import check_seats, say_made, state_dir, whole
from ..games.crisp import DRAW_SECONDS_CHOICES, LIMIT_CHOICES, MAX_LIMIT
from ..table.config import SEATS
from ..table.lobby import check_host_options
from ..table.peer import Note
from .discovery import MAX_INSTANCE, Discovery
from .link import printable
from .node import Node
from .store import BOTS, Lock, NodeState, SeatStore, bot_key, clear, not_a_seat
from .seat import GONE_AFTER_S

SHOWN = frozenset({"round", "over", "fault", "void", "missing", "back", "aid"})
T = TypeVar("T")


def make_bot(game: str, kind: str, seed: int | str | None = None) -> Bot:
    """A good bot for the game, or a random one (its choices need no secrecy: `random` is fine)."""
    if kind == "good":
        return CrispBot() if game == "crisp" else CrescendoBot()
    return RandomBot(random.Random(seed), 0.05)


@dataclass
class BotPeer:
    """What one headless peer does: host (`create`) or join, and how it reaches the others."""

    bot: str = "random"
    name: str = field(default_factory=lambda: f"bot-{secrets.token_hex(2)}")
    create: bool = False
    game: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    players: int = 2
    table: str | None = None
    interfaces: Sequence[str] | None = None
    peers: Sequence[tuple[str, int]] = ()
    mdns: bool = True
    port: int = 0
    gone_after: float = GONE_AFTER_S
    think: float = 0.05
    state: str | None = None  # journal our seat here; come back into the table it holds, if any
    given: frozenset[str] = frozenset({"bot", "interfaces", "gone_after"})  # set here, not left to a resume


def resume_config(cfg: BotPeer, saved: NodeState) -> BotPeer:
    """The settings of a peer coming back into its seat: those it was started with, as its state keeps them, each
    one given again now winning; its name is its seat's. InputError for another --port: the seat listens where the
    others dial it."""
    if cfg.port and cfg.port != saved.port:
        raise InputError(f"--port {cfg.port}: this seat comes back on its port, {saved.port}, where the other seats "
                         "dial it (leave --port out)")

    def kept(name: str, now: T) -> T:
        was: T | None = getattr(saved, name)
        return now if name in cfg.given or was is None else was

    return replace(cfg, name=saved.config.names[saved.seat], bot=kept("bot", cfg.bot),
                   interfaces=kept("interfaces", cfg.interfaces), gone_after=kept("gone_after", cfg.gone_after))


def load_seat(cfg: BotPeer) -> tuple[BotPeer, NodeState | None]:
    """The seat journaled in `cfg.state` to come back to (None: none), and the settings to do it with; InputError
    for a state directory that is not one, LocalError for a journal that cannot be ours."""
    state = Path(cfg.state) if cfg.state else None
    if state is not None and state.exists() and not state.is_dir():
        raise InputError(f"--state {state}: not a directory")
    saved = NodeState.load(state) if state is not None else None
    if state is not None and saved is None and (why := not_a_seat(state)) is not None:
        # Before we join anyone: files of a seat's names that are no seat to come back to are not ours to write over.
        raise InputError(f"--state {why}")
    return (cfg, None) if saved is None else (resume_config(cfg, saved), saved)


async def run_bot_peer(cfg: BotPeer, on_note: Callable[[Note], None] | None = None,
                       disco: Discovery | None = None, on_ready: Callable[[Node], None] | None = None) -> dict[str, Any]:
    """Run one bot peer in this loop until its table finishes or stops (coming back into the seat journaled in
    `cfg.state`, with the settings it was started with, when there is one); returns a summary."""
    cfg, saved = load_seat(cfg)
    return await play_seat(cfg, saved, on_note, disco, on_ready)


async def play_seat(cfg: BotPeer, saved: NodeState | None, on_note: Callable[[Note], None] | None = None,
                    disco: Discovery | None = None, on_ready: Callable[[Node], None] | None = None) -> dict[str, Any]:
    """`run_bot_peer` once `load_seat` gave `cfg` and the seat to come back to (`saved`; None: a new one)."""
    state = Path(cfg.state) if cfg.state else None
    if saved is not None:  # we crashed or were killed mid-game: come back as the same seat, where we listened
        assert state is not None
        key = bot_key(state, saved)
        # Multicast as before: a seat that joined by address, maybe where multicast is blocked, does not start now.
        identity, port, mdns = Identity(key, saved.config.names[saved.seat]), saved.port, saved.announced and cfg.mdns
    else:
        identity, port = generate(cfg.name), cfg.port
        mdns = cfg.mdns and not (cfg.peers and not cfg.create)
    async with Node(identity, cfg.interfaces, mdns=mdns, port=port, on_note=on_note,
                    gone_after=cfg.gone_after, disco=disco, state=state, bot=cfg.bot,
                    comeback=saved is not None) as node:
        if saved is not None:
            assert state is not None
            node.resume(SeatStore(state, saved.config, saved.seat), saved.config, saved.dial, saved.later)
            if on_ready is not None:
                on_ready(node)
        elif cfg.create:
            assert cfg.game is not None
            await node.host(cfg.game, cfg.options, cfg.table or f"{cfg.name}'s table", cfg.players)
            if on_ready is not None:
                on_ready(node)
            await node.wait_players(cfg.players)
            node.seat_table()
        else:
            where = list(cfg.peers) or await node.find(cfg.table, cfg.game)
            if on_ready is not None:
                on_ready(node)
            await node.join(where)
        game = saved.config.game if saved is not None else node.lobby.game if node.lobby else None
        try:
            await node.play(make_bot(game or cfg.game or "crisp", cfg.bot), think=cfg.think)
        except LinkBroken:
            if state is not None and saved is None:
                clear(state)  # no link to every seat: we never said ready, so there is no game to come back to
            raise
        assert node.seat is not None
        peer = node.seat.peer
        if state is not None and node.seat.shell.over:
            clear(state)  # the table is over: nothing to come back to
        out = peer.seating.voted_out is not None  # the game is over for us, but we did not finish it
        gave_up = peer.gave_up is not None  # cut off to the end: not one that healed, then stopped
        return {"name": identity.name, "seat": peer.me, "resumed": saved is not None,
                "finished": peer.finished and not out, "out": out, "voted_out": peer.seating.voted_out,
                "stopped": peer.stopped, "cut_off": peer.cut_off if gave_up else None,
                "names": list(peer.names), "totals": peer.game.totals, "rounds": peer.game.rounds_done,
                "log": peer.rs.log_hash.hex() if peer.rs else None,
                **fault_keys(peer.faults),
                "notes": [f"{n.kind}: {n.detail}" for n in node.seat.shell.notes if n.kind in SHOWN],
                "port": node.links.port, "ready_at": node.seat.started, "first_turn_at": node.seat.shell.first_turn,
                "end_at": time.time(), "cpu_s": time.process_time(),
                "latency": {action: list(times) for action, times in node.seat.shell.latency.items()},
                "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, **node.links.traffic()}


def fault_keys(faults: Sequence[Note]) -> dict[str, list[Any]]:
    """The summary's faults, one entry per fault in each key: as text, whom it blamed, and a report's claim."""
    return {"faults": [f"{n.detail} [{n.blame}]" for n in faults], "blamed": [n.blame for n in faults],
            "claims": [None if n.claim is None else n.claim.to_json() for n in faults]}


# ---------------------------------------------------------------- the command


def table_name(text: str) -> str:
    """An option type: a table's name as announced on the network, refused rather than announced cut or changed
    (a joiner typing the name given would not find it)."""
    if not text.strip() or text != text.strip() or not text.isprintable() or "." in text:
        raise argparse.ArgumentTypeError(f"{text!r}: a table's name is printable, with no dot, and no space at "
                                         "either end")
    if len(text.encode()) > MAX_INSTANCE:
        raise argparse.ArgumentTypeError(f"a table's name is at most {MAX_INSTANCE} bytes on the network, "
                                         f"not {len(text.encode())}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Bot, table, host options, how to reach the others."""
    parser.add_argument("--bot", choices=BOTS, default=None,
                        help="who plays this seat (default random; coming back with --state: the one it had)")
    parser.add_argument("--name", default=None, help="this player's name (default bot-XXXX)")
    parser.add_argument("--table", type=table_name, default=None, metavar="NAME",
                        help="the table to create, or to join (default: the first with a free seat)")
    parser.add_argument("--create", action="store_true", help="host a new table")
    parser.add_argument("--game", choices=sorted(SEATS), help="the game (required with --create; a filter when joining)")
    parser.add_argument("--players", type=int, default=None, help="host: seat the table when this many have joined (default 2)")
    parser.add_argument("--limit", type=whole(1), default=None,
                        help=f"host, Crisp: the game limit (default 100; the client offers {', '.join(map(str, LIMIT_CHOICES))}, "
                             f"a tester may set any up to {MAX_LIMIT})")
    parser.add_argument("--discard-draw", action="store_true", help="host, Crisp: allow draws from the discard pile")
    parser.add_argument("--draw-seconds", type=int, default=None, choices=[c for c in DRAW_SECONDS_CHOICES if c],
                        help="host, Crisp: time per draw (default no limit)")
    parser.add_argument("--interface", action="append", default=None, metavar="IF",
                        help="an IPv4 interface (name or address) to use; repeat for several (default every one; "
                             "coming back with --state: those it had)")
    parser.add_argument("--peer", action="append", default=[], metavar="HOST:PORT",
                        help="join the host at this address without multicast")
    parser.add_argument("--no-mdns", action="store_true", help="host without announcing (guests need --peer)")
    parser.add_argument("--port", type=int, default=0,
                        help="the TCP port to listen on (default: a free one from 10000 to 32767, below the ports "
                             "the system lends to outgoing connections, so that a seat coming back finds it free)")
    parser.add_argument("--gone-after", type=float, default=None,
                        help="seconds a seat may be missing before we vote it gone and the table goes on "
                             f"without it (default {GONE_AFTER_S:.0f}; coming back with --state: the one it had)")
    parser.add_argument("--state", metavar="DIR", type=state_dir, default=None,
                        help="journal this seat in DIR (a directory of its own: one that holds other files named "
                             "journal, node or table is refused); started again with the same DIR after a crash or "
                             "a kill, the peer comes back into its round (its key, port, table, --bot, "
                             "--interface and --gone-after are in DIR, readable by you alone; one of the last three given "
                             "again wins, a --port given again must be the same); "
                             "one peer at a time: a second one given the same DIR says so and stops; a DIR that does "
                             "not exist is made, and said once, if the directory above it exists")
    parser.add_argument("--json", action="store_true",
                        help="print the result as one JSON line, alone on standard output (what is printed "
                             "otherwise goes to standard error): " + "; ".join(f"{k}: {v}" for k, v in SUMMARY.items())
                             + "; told to quit (a signal, or --attached and standard input closed): only name and quit "
                             "(what told it)")
    parser.add_argument("--attached", action="store_true",
                        help="quit (saying goodbye) when standard input closes: the process that started this peer is gone")


# The keys of `peer --json`'s line, and what each holds.
SUMMARY = {"name": "this player", "seat": "its seat", "resumed": "came back with --state",
           "finished": "the game ended and we were in it",
           "out": "voted out while missing (cut off too: the others told us once we were back)",
           "voted_out": "why (or null)", "stopped": "why the table stopped (or null)",
           "cut_off": "why it takes it that its own network was lost, every other seat missing at once, when it "
                      "gave up for that, the game unfinished (exit status 3; or null)", "names": "the seats' names",
           "totals": "the scores", "rounds": "rounds played", "log": "the last round's log hash (hex)",
           "faults": "each fault as text with its blame", "blamed": "whom each fault blamed (null: no one)",
           "claims": "for each fault that blames no one on a report's word only, {reporter, blames}: whom that "
                     "report's sender blamed (else null)",
           "notes": "what it printed", "port": "its TCP port",
           "ready_at, first_turn_at, end_at": "Unix times", "cpu_s": "its CPU seconds",
           "latency": "per action, seconds until shown", "peak_rss_kib": "peak memory",
           "frames_in, bytes_in, frames_out, bytes_out": "its traffic"}


def config_from_args(args: argparse.Namespace) -> BotPeer:
    """The peer's settings; InputError on any bad combination."""
    options: dict[str, Any] = {}
    players = 2 if args.players is None else args.players
    if args.create:
        if args.game is None:
            raise InputError("--create needs --game")
        if args.peer:
            raise InputError("--peer: a guest joins the host there; the host of a new table (--create) dials no one")
        check_seats(args.game, players)
        if args.game == "crisp":
            options = {"limit": args.limit or 100, "discard_draw": args.discard_draw, "draw_seconds": args.draw_seconds}
        elif args.limit is not None or args.discard_draw or args.draw_seconds is not None:
            raise InputError("--limit, --discard-draw and --draw-seconds are Crisp options")
        check_host_options(args.game, options)
    elif args.players is not None or args.limit is not None or args.discard_draw or args.draw_seconds is not None:
        raise InputError("--players, --limit, --discard-draw and --draw-seconds set the table a host opens: "
                         "only with --create")
    elif args.no_mdns and not args.peer:
        raise InputError("--no-mdns without --create needs --peer HOST:PORT")
    if args.name is not None and not valid_name(args.name):
        raise InputError(f"--name: a name must be 1 to {MAX_NAME} bytes of printable UTF-8, not {args.name!r}")
    if not 0 <= args.port < 65536:
        raise InputError("--port must be 0 to 65535")
    if args.gone_after is not None and not (math.isfinite(args.gone_after) and args.gone_after > 0):
        raise InputError("--gone-after must be positive")
    given = frozenset(k for k, v in (("bot", args.bot), ("interfaces", args.interface), ("gone_after", args.gone_after))
                      if v is not None)
    name = f"bot-{secrets.token_hex(2)}" if args.name is None else args.name
    return BotPeer(args.bot or "random", name, args.create, args.game, options,
                   players, args.table, args.interface, [_address(p) for p in args.peer],
                   not args.no_mdns, args.port, GONE_AFTER_S if args.gone_after is None else args.gone_after,
                   state=args.state, given=given)


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--peer wants HOST:PORT, not {text!r}")
    return host, int(port)


def joining_words(table: str | None, game: str | None) -> str:
    """Which table a guest without --peer looks for, as --table and --game filter the tables found."""
    if table is not None:
        return f"the table {printable(repr(table))}" + (f" if it plays {game}" if game else "")
    return f"the first {game + ' ' if game else ''}table found with a free seat"


def note_line(name: str, note: Note) -> str | None:
    """The line `p2pcards peer` prints for a note (None for a kind it does not show): the kind first, for a
    tester's grep, unless the words begin with it; what others said in it (a leave's or a fault's reason, a
    goodbye) written printable, so that no peer's words can drive our terminal."""
    if note.kind not in SHOWN:
        return None
    words = note.detail if note.detail.startswith(note.kind) else f"{note.kind}: {note.detail}"
    return printable(f"[{name}] {words}")


def run(args: argparse.Namespace) -> int:
    """Run the peer until its table is over (0 when it finished, 1 when it stopped or every other seat voted it
    out, 3 when it was cut off from every other seat at once) or it is told to quit (0)."""
    cfg = config_from_args(args)
    try:
        cfg, saved = load_seat(cfg)  # coming back: the seat's name and settings, for what we print too
    except LocalError as exc:
        print(f"p2pcards peer: {printable(str(exc))}", file=sys.stderr)
        return 2
    say_made("peer", "--state", cfg.state)
    # Held from here on (load_seat only read, and refused a directory of other files untouched): a second peer on
    # this journal would sign places of the same chain.
    with Lock(Path(cfg.state)) if cfg.state is not None else contextlib.nullcontext():
        return _run(cfg, saved, args)


def _run(cfg: BotPeer, saved: NodeState | None, args: argparse.Namespace) -> int:
    """`run` once the seat to come back to, if any, is loaded and its state directory held by this process alone."""
    log = sys.stderr if args.json else sys.stdout  # with --json, standard output is the JSON line alone

    def show(note: Note) -> None:
        line = note_line(cfg.name, note)
        if line is not None:
            print(line, file=log, flush=True)

    def ready(node: Node) -> None:
        where = f"table {node.ad.ad.name!r} " if node.ad else ""
        joining = ", ".join(f"{host}:{port}" for host, port in cfg.peers) or joining_words(cfg.table, cfg.game)
        doing = "coming back " if node.resumed else "hosting " + where if cfg.create else f"joining {joining}, listening "
        moved = "" if node.moved_from is None else f" (port {node.moved_from} was taken: we dial every seat)"
        print(f"[{cfg.name}] {doing}on port {node.links.port}{moved}", file=log, flush=True)

    async def main() -> dict[str, Any]:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        quit_by: list[str] = []

        def stop(sig: signal.Signals) -> None:
            quit_by.append(sig.name)
            task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGHUP: its terminal closed (unless nohup)
            if sig != signal.SIGHUP or signal.getsignal(sig) != signal.SIG_IGN:
                loop.add_signal_handler(sig, stop, sig)
        if args.attached:
            reader = asyncio.StreamReader()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

            async def watch() -> None:
                while await reader.read(4096):
                    pass
                quit_by.append("the end of standard input")
                task.cancel()

            watcher = loop.create_task(watch())
        try:
            return await play_seat(cfg, saved, show, on_ready=ready)
        except asyncio.CancelledError:
            if not quit_by:
                raise
            return {"name": cfg.name, "quit": quit_by[0]}
        finally:
            if args.attached:
                watcher.cancel()

    try:
        summary = asyncio.run(main())
    except LinkBroken as exc:
        print(f"p2pcards peer: {printable(str(exc))}", file=sys.stderr)
        return 1
    except (OSError, LocalError) as exc:  # a port in use, an address not ours, a --state that is not a seat's
        print(f"p2pcards peer: {printable(str(exc))}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary), flush=True)
    elif "quit" in summary:
        print(f"[{cfg.name}] quit on {summary['quit']}: said goodbye", flush=True)
    elif summary.get("cut_off"):
        print(f"[{cfg.name}] cut off: {printable(str(summary['cut_off']))}; the game did not finish here", flush=True)
    elif summary.get("out"):
        print(f"[{cfg.name}] voted out while we were missing: {printable(str(summary['voted_out']))}", flush=True)
    else:
        state = "finished" if summary["finished"] else f"stopped: {printable(str(summary['stopped']))}"
        totals = ", ".join(f"{name} {total}" for name, total in zip(summary["names"], summary["totals"]))
        print(f"[{cfg.name}] {state}; totals {totals}", flush=True)
    return 0 if summary.get("finished") or "quit" in summary else 3 if summary.get("cut_off") else 1
