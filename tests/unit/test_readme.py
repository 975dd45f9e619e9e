import re
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def test_readme_example_runs_and_prints_what_it_claims(capsys):
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert block is not None
    assert len(block.group(1).splitlines()) <= 25
    exec(compile(block.group(1), str(README), "exec"), {"__name__": "readme"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("{")
    assert "'enum': ['low', 'high']" in lines[0]
    assert lines[1] == "1 item(s), low priority"
    assert "items/0/qty: expected integer" in lines[2]
    assert "rush" in lines[2]
    assert "unexpected_property" in lines[2]
