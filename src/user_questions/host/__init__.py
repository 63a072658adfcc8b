"""The host: a durable inbox of questions that humans answer from a web page.

Level 8. `create_app()` (in `user_questions.host.app`) builds the Starlette app that `uq serve`
runs; `Hub` (in `user_questions.host.hub`) holds the pending requests and the in-process
provider; `open_store()` (in `user_questions.host.stores`) opens the store behind them. Nothing is
re-exported here, so importing one part never loads the web stack of another.
"""
