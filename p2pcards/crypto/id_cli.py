"""`p2pcards id`: this player's name and key fingerprint, and a new key on request."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import say_made, state_dir
from .identity import HOME_ENV, KEY_FILE, create, data_dir, load_or_create, set_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `p2pcards id`."""
    parser.add_argument("--new", action="store_true", help="make a new key (an existing one is kept as a backup)")
    parser.add_argument("--name", help="set the display name shown to other players")
    parser.add_argument("--dir", type=state_dir, default=None, metavar="DIR",
                        help=f"where the key ({KEY_FILE}) and the name are kept (default ${HOME_ENV}, else "
                             "$XDG_DATA_HOME/p2pcards or ~/.local/share/p2pcards); made if missing, said once")


def run(args: argparse.Namespace) -> int:
    """Print the name and fingerprint, making the key on first use or when --new asks for it."""
    say_made("id", "--dir", args.dir)
    directory = Path(args.dir) if args.dir is not None else data_dir()
    if args.name is not None:
        set_name(args.name, directory)
    if args.new:
        ident = create(directory, replace=True)
        print(f"new identity key written to {directory / KEY_FILE}")
    else:
        ident = load_or_create(directory)
    print(f"name:        {ident.name}")
    print(f"fingerprint: {ident.fingerprint}")
    return 0
