"""``python -m checker`` is the ``txcheck`` command."""

from checker.cli import console_main

console_main()
