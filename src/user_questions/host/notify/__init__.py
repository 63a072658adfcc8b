"""Telling people: events, notifiers, messages, and the answer links they carry.

`events` (what a notifier hears: a question pending, a question settled), `notifier` (the queue
and retry loop every notifier shares), `message` (the text a person reads), `links` (signed
one-tap answer links) and `link_pages` (the page such a link opens); the notifiers themselves:
`apprise` (ntfy, Slack, Telegram, email, ...), `webhook`, `command`. Nothing is re-exported.
"""
