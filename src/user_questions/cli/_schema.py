"""`uq schema`: print (or write) the published JSON Schema documents."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal

from user_questions._schema import schema_documents, write_schema_documents

Document = Literal["all", "wire", "ask_user_question", "exit_plan_mode"]


def schema(document: Document = "all", *, write: Path | None = None) -> None:
    """Print the JSON Schema of the wire vocabulary and of the model-facing tools.

    Parameters
    ----------
    document
        Which document to print: all of them (one JSON object keyed by name), or one.
    write
        Write every document into this directory (as under `schema/`) instead of printing.
    """
    if write is not None:
        for path in write_schema_documents(write):
            print(path)
        return
    documents = {name.removesuffix(".json"): doc for name, doc in schema_documents().items()}
    chosen = documents if document == "all" else documents[document]
    json.dump(chosen, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
