"""The `vidprep` command of the wheel: starts the `vidprep` binary shipped inside the package.

The wheel built by scripts/build-wheel.sh carries the command-line tool as
``vidprep/_bin/vidprep`` (linked against the FFmpeg bundled beside it, found through its RPATH);
this entry point replaces the Python process with it, so that exit codes, signals and standard
streams are the binary's own. A package built without it (``pip install ./python``, a maturin
build) runs the same command line compiled into its native module, in this process.
"""

import os
import sys


def binary() -> str:
    """The path of the bundled `vidprep` binary."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "vidprep")


def main() -> None:
    path = binary()
    if os.path.isfile(path):
        if not os.access(path, os.X_OK):
            sys.stderr.write(f"vidprep: {path} is not executable: reinstall the wheel, or chmod +x it\n")
            sys.exit(2)
        os.execv(path, ["vidprep"] + sys.argv[1:])
    from ._vidprep import cli_main

    sys.stdout.flush()
    sys.exit(cli_main(["vidprep"] + sys.argv[1:]))


if __name__ == "__main__":
    main()
