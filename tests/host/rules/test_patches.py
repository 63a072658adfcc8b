"""The patch reader reads `apply_patch` input as Codex's parser does
(`codex-rs/apply-patch/src/parser.rs`): the files it adds, updates, moves and deletes, headers
trimmed, `Move to` honoured, several files, the heredoc form, and refusals where Codex refuses."""

from __future__ import annotations

import pytest

from user_questions.host.rules.patches import PatchedFile, PatchError, read_patch


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def test_every_kind_of_hunk_is_read_with_its_paths() -> None:
    text = patch(
        "*** Add File: path/add.py",
        "+abc",
        "+def",
        "*** Delete File: path/delete.py",
        "*** Update File: path/update.py",
        "*** Move to: path/update2.py",
        "@@ def f():",
        "-    pass",
        "+    return 123",
    )
    assert read_patch(text) == [
        PatchedFile("add", "path/add.py"),
        PatchedFile("delete", "path/delete.py"),
        PatchedFile("update", "path/update.py", "path/update2.py"),
    ]


def test_a_header_indented_after_an_added_file_still_starts_a_hunk() -> None:
    """Codex trims a hunk's header line: an indented `*** Update File:` after an added file's
    lines names a file the tool writes (a rule reading headers with a regex missed it)."""
    text = patch("*** Add File: /home/dev/shop/a.py", "+x", " *** Update File: /home/dev/.bashrc",
                 "@@", "-a", "+b")  # fmt: skip
    assert [file.path for file in read_patch(text)] == ["/home/dev/shop/a.py", "/home/dev/.bashrc"]


def test_an_indented_header_inside_an_update_is_a_context_line_as_codex_reads_it() -> None:
    text = patch("*** Update File: a.py", "@@", " *** Delete File: /etc/passwd", "-a", "+b")
    assert read_patch(text) == [PatchedFile("update", "a.py")]


def test_a_move_destination_is_read_as_written_and_only_unindented() -> None:
    moved = patch("*** Update File: a.py", "*** Move to: /home/dev/.bashrc", "@@", "-a", "+b")
    assert read_patch(moved) == [PatchedFile("update", "a.py", "/home/dev/.bashrc")]
    indented = patch("*** Update File: a.py", " *** Move to: /x", "-a", "+b")
    assert read_patch(indented) == [PatchedFile("update", "a.py")]  # a context line to Codex


def test_the_text_around_is_trimmed_lines_end_in_lf_or_crlf_and_a_heredoc_is_unwrapped() -> None:
    text = "\n\n  " + patch("*** Delete File: x.py").replace("\n", "\r\n") + "  \n"
    assert read_patch(text) == [PatchedFile("delete", "x.py")]
    heredoc = "<<'EOF'\n" + patch("*** Delete File: y.py") + "EOF\n"
    assert read_patch(heredoc) == [PatchedFile("delete", "y.py")]
    assert read_patch(patch()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "first line"),
        ("*** Begin Patch\n*** Delete File: x", "last line"),
        ("diff --git a/x b/x\n", "first line"),
        (patch("*** Update File: x.py"), "no change"),
        (patch("*** Frobnicate File: x.py"), "not a file's header"),
        (patch("*** Update File: x.py", "@@", "-a", "junk"), "without @@"),
        (patch("*** Update File: x.py", "@@", "-a", "@@@", "+b"), "without @@"),
        (patch("*** Update File: x.py", "junk"), "not a change line"),
        (patch("*** Add File:x.py"), "not a file's header"),
        ("\x1c" + patch("*** Delete File: x"), "first line"),
    ],
)
def test_a_patch_codex_refuses_is_refused_saying_where(text: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        read_patch(text)
