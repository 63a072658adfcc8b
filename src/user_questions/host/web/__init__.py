"""What a browser is served: the inbox and history pages, their static files, history's JSON.

`pages` (the HTML pages, the session cookie, `static/`: plain ES modules and CSS, no build step)
and `history` (the shape of `GET /api/history` and its query). Nothing is re-exported.
"""
