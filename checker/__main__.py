"""``python -m txcheck``: the same as the ``txcheck`` command."""

from txcheck.cli import console_main

console_main()
