"""Answering in the chat apps people already carry: Telegram (long polling) and Slack.

Both reach the host over outbound connections only, so a host behind NAT still gets the taps.
`pairing` (one-time codes that make a chat user a person), `cards` (what a request looks like as
a message and the answer a person builds in it, apart from any transport), `answering` (whether
a tap counts, and the answer given as the person), `bot_api` (the Telegram Bot API over HTTP),
`telegram` (its host task: the poller, the messages, their edits), `slack_api` (Slack's Web API
over HTTP), `slack_blocks` (a card as Block Kit), `slack` (its host task: Socket Mode, the
messages, their edits).
Nothing is re-exported.
"""
