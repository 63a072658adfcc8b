"""`python -m user_questions.cli`: the same as the `uq` command."""

from user_questions.cli import main

main()
