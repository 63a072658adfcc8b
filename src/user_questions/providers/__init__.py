"""Providers: the surfaces that show questions to a human.

Only `ScriptedProvider` is re-exported here: the terminal and remote providers need extras and are
imported from their modules (`user_questions.providers.terminal`, `.remote`).
"""

from user_questions.providers.scripted import ScriptedAnswer, ScriptedProvider

__all__ = ["ScriptedAnswer", "ScriptedProvider"]
