"""The docs site stays true: it builds with ``mkdocs build --strict`` (a broken link, anchor,
nav entry or API reference fails), and its generated pages are what ``docs/hooks.py`` writes
from the code now (every command's options from its parser, the flat API) and every speed and
quality figure the docs quote is what it writes from the benchmarks' records."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: ``./dev.sh test-lowest`` sets it for ``.venv-lowest``, which installs the lowest supported
#: versions of foilkit's own dependencies and not the docs site's tools.
LOWEST = os.environ.get("FOILKIT_LOWEST_VERSIONS") == "1"


def _hooks():
    spec = importlib.util.spec_from_file_location("foilkit_docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(
    LOWEST,
    reason="the lowest-versions environment (.venv-lowest, FOILKIT_LOWEST_VERSIONS=1) does not "
    "install mkdocs; the docs site is built on the pinned stack (requirements.txt)",
)
def test_the_docs_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    started = time.monotonic()
    result = subprocess.run(
        # no --quiet: it hides the warnings --strict counts, and the build passes
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    seconds = time.monotonic() - started
    assert (site / "commands" / "evaluate" / "index.html").is_file()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "out_dir" in api and "RunResults" in api  # the docstrings were read, not just named
    assert seconds < 120, f"mkdocs build took {seconds:.0f} s"


def test_the_command_pages_are_the_parsers_help():
    from foilkit.cli import COMMANDS

    hooks = _hooks()
    written = re.search(
        r"as Python (\d+\.\d+)'s argparse", (DOCS / "commands" / "index.md").read_text()
    )
    assert written, "docs/commands/index.md does not say which Python wrote it: run docs/hooks.py"
    if written.group(1) != hooks.PYTHON:
        pytest.skip(
            f"docs/commands/ were written by Python {written.group(1)}'s argparse and this is "
            f"Python {hooks.PYTHON}, whose help layout differs: compared under {written.group(1)}"
        )
    pages = hooks.command_pages()
    assert set(pages) == {f"{name}.md" for name in COMMANDS} | {"index.md"}
    stale = [
        name
        for name, text in pages.items()
        if not (DOCS / "commands" / name).is_file()
        or (DOCS / "commands" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"docs/commands/{stale} differ from the parsers: run python docs/hooks.py"
    written = {path.name for path in (DOCS / "commands").glob("*.md")}
    assert written == set(pages), (
        f"docs/commands/ holds pages of no command: {written - set(pages)}"
    )
    assert "--video-root" in pages["evaluate.md"] and "--videos" not in pages["evaluate.md"]
    assert "## foilkit generate vitatecs" in pages["generate.md"]
    assert "## foilkit metrics compute" in pages["metrics.md"]


def test_the_api_page_documents_the_flat_api():
    import foilkit

    page = _hooks().api_page()
    assert (DOCS / "api.md").read_text(encoding="utf-8") == page, "run python docs/hooks.py"
    for name in foilkit.__all__:
        if name != "__version__":
            assert f".{name}\n" in page, name


# --- the benchmarks' figures -----------------------------------------------------------------


def _figure_pages() -> list[Path]:
    return sorted(_hooks().figures())


@pytest.mark.parametrize("page", _figure_pages(), ids=lambda path: path.name)
def test_the_quoted_figures_are_the_benchmarks_results(page):
    """Each speed and quality figure a page quotes sits in a block ``docs/hooks.py`` writes from
    ``benchmarks/results/*.json``: a figure typed or edited by hand differs from it."""
    hooks = _hooks()
    text = page.read_text(encoding="utf-8")
    assert text == hooks.figures_page(page, text), (
        f"{page.relative_to(REPO)}'s figures differ from benchmarks/results/: "
        "run python docs/hooks.py"
    )


def _blocks(hooks, page: Path, text: str) -> dict[str, str]:
    """Each generated block of ``page``'s ``text``: name -> its lines between the markers."""
    found = {}
    for name, (sources, _) in hooks.figures()[page].items():
        start, end = hooks.figure_markers(name, sources)
        found[name] = text.split(start, 1)[1].split(end, 1)[0]
    return found


@pytest.mark.parametrize(
    ("page", "name", "figure"),
    [
        # each is a figure read from its JSON record and formatted as the block quotes it
        (
            "speed.md",
            "speed",
            lambda r: f"{r('cpu2_scoring_full_clip-tiny', 0, 'engine/naive'):.1f}x",
        ),
        ("speed.md", "speed", lambda r: f"{r('h100_scoring_pairs_run1', 0, 'engine/naive'):.1f}x"),
        (
            "RESULTS.md",
            "cpu2 full",
            lambda r: f"{r('cpu2_scoring_full_clip-tiny', 1, 'engine/naive'):.2f}x",
        ),
        (
            "RESULTS.md",
            "cpu2 quick",
            lambda r: f"{r('cpu2_scoring_quick', 8, 'engine/model-only'):.2f}x",
        ),
        (
            "RESULTS.md",
            "h100 scoring",
            lambda r: f"{r('h100_scoring_pairs_run1', 1, 'engine/decode-only'):.2f}x",
        ),
        (
            "RESULTS.md",
            "summary",
            lambda r: f"{r('cpu2_scoring_quick', 3, 'engine/naive'):.2f}x",
        ),
    ],
)
def test_a_figure_changed_by_hand_fails(page, name, figure):
    """A figure of a block, read from its JSON and changed in the page's text, makes the page
    differ from what ``docs/hooks.py`` writes; writing it again restores the JSON's figure."""
    hooks = _hooks()
    path = next(path for path in hooks.figures() if path.name == page)

    def ratio(result: str, case: int, key: str) -> float:
        records = json.loads((hooks.RESULTS / f"{result}.json").read_text(encoding="utf-8"))
        return records["cases"][case]["ratios"][key]

    quoted = figure(ratio)
    text = path.read_text(encoding="utf-8")
    block = _blocks(hooks, path, text)[name]
    assert quoted in block, f"{page}'s block {name!r} does not quote {quoted}"
    edited = text.replace(block, block.replace(quoted, "9.99x", 1), 1)
    assert edited != hooks.figures_page(path, edited)
    assert hooks.figures_page(path, edited) == text


def test_the_speed_page_types_no_figure_by_hand():
    """Outside its generated block the speed page quotes no speed-up, time or size: a figure
    typed there would not be checked against the results."""
    hooks = _hooks()
    text = (DOCS / "speed.md").read_text(encoding="utf-8")
    for block in _blocks(hooks, DOCS / "speed.md", text).values():
        text = text.replace(block, "")
    typed = re.findall(r"\b\d+(?:\.\d+)?\s*(?:x\b|s\b|GiB|MiB|%)", text)
    assert not typed, f"docs/speed.md types figures by hand: {typed}"


@pytest.mark.parametrize("page", _figure_pages(), ids=lambda path: path.name)
def test_a_figure_block_without_its_markers_is_an_error(page):
    hooks = _hooks()
    name, (sources, _) = next(iter(hooks.figures()[page].items()))
    start, _ = hooks.figure_markers(name, sources)
    text = page.read_text(encoding="utf-8").replace(start, "")
    with pytest.raises(ValueError, match="lacks the markers"):
        hooks.figures_page(page, text)


def test_every_page_is_in_the_nav():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)

    def pages(entries) -> set[str]:
        found = set()
        for entry in entries:
            values = entry.values() if isinstance(entry, dict) else [entry]
            for value in values:
                found |= pages(value) if isinstance(value, list) else {value}
        return found

    nav = pages(config["nav"])
    on_disk = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert on_disk == nav, f"not in the nav: {on_disk - nav}; missing: {nav - on_disk}"


# --- links and runnable examples -------------------------------------------------------------

#: The marker that makes the fenced block after it an example the suite runs.
RUNNABLE = "<!-- runnable -->"
#: Hub ids the runnable examples name -> the tiny random twin that stands in for it here.
STAND_INS = {"openai/clip-vit-base-patch32": "clip"}
#: The VITATECS rows of the sandbox's annotation copy (``~/annotations/vitatecs``), in the
#: published layout, each with its synthetic video under ``~/videos/vitatecs``.
SANDBOX_ROWS = [
    {
        "src_dataset": "MSRVTT",
        "video_name": f"video{index}.mp4",
        "caption": f"a red square moves to the {way}",
        "counterfactual": f"a red square moves to the {other}",
        "aspect": "Direction",
    }
    for index, (way, other) in enumerate([("left", "right"), ("right", "left"), ("left", "right")])
]


def _documents() -> dict[str, str]:
    """README.md and every docs page: path -> text."""
    paths = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
    return {str(path.relative_to(REPO)): path.read_text(encoding="utf-8") for path in paths}


def _runnable(text: str) -> list[tuple[str, str]]:
    """The (language, code) of each fenced block marked runnable, in the page's order."""
    pattern = "^" + re.escape(RUNNABLE) + r"[ \t]*\n```(bash|python)\n(.*?)```"
    return re.findall(pattern, text, flags=re.S | re.M)


def test_every_relative_link_resolves():
    """A relative link in a docs page names a file of the docs (the site's pages and images);
    an ``#anchor`` names a heading of that page (mkdocs --strict checks the anchors too)."""
    broken = []
    for name, text in _documents().items():
        if name == "README.md":
            continue  # PyPI shows it alone: tests/test_readme.py keeps its links absolute
        page = REPO / name
        for target in re.findall(r"\]\(([^)\s]+)", text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).resolve().exists():
                broken.append(f"{name}: {target}")
    assert not broken, broken


def test_the_readme_and_the_docs_have_runnable_examples():
    marked = {name: _runnable(text) for name, text in _documents().items()}
    assert marked["README.md"], "the README's first result must be a runnable example"
    assert sum(len(blocks) for blocks in marked.values()) >= 3
    for name, text in _documents().items():  # a marker with no block after it runs nothing
        markers = re.findall(rf"^{re.escape(RUNNABLE)}$", text, flags=re.M)
        assert len(markers) == len(marked[name]), f"{name}: a {RUNNABLE} before no block"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> dict[str, str]:
    """A home folder holding what the runnable examples name (``~/videos/vitatecs``,
    ``~/annotations/vitatecs``, ``metrics/`` beside the working folder as in a checkout), and the
    environment to run them in: tiny models built once, nothing downloaded."""
    from foilkit.synthetic.models import tiny_model_path
    from foilkit.synthetic.videos import SyntheticScene, write_video

    home = tmp_path_factory.mktemp("home")
    annotations = home / "annotations" / "vitatecs"
    annotations.mkdir(parents=True)
    (annotations / "Direction.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in SANDBOX_ROWS), encoding="utf-8"
    )
    videos = home / "videos" / "vitatecs" / "MSRVTT"
    videos.mkdir(parents=True)
    for row in SANDBOX_ROWS:
        way = row["caption"].rsplit(" ", 1)[1]
        write_video(videos / row["video_name"], SyntheticScene(direction=way), num_frames=12)
    (home / "metrics").symlink_to(REPO / "metrics")
    tiny = tiny_model_path(STAND_INS["openai/clip-vit-base-patch32"])
    env = {
        **os.environ,
        "HOME": str(home),
        "HF_HOME": str(home / "hf"),
        "FOILKIT_TINY_MODELS": str(tiny.parent),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return {"home": str(home), **{f"env:{k}": v for k, v in env.items()}}


def _stand_in(code: str) -> str:
    """``code`` with each Hub id it names replaced by its tiny twin's folder."""
    from foilkit.synthetic.models import tiny_model_path

    for model, twin in STAND_INS.items():
        code = code.replace(model, str(tiny_model_path(twin)))
    return code


@pytest.mark.parametrize(
    "name", [name for name, text in _documents().items() if _runnable(text)], ids=str
)
def test_the_runnable_examples_run(sandbox, name):
    """Each page's runnable blocks, in order, in one working folder of the sandbox home, on a
    tiny model and synthetic videos: each must exit 0."""
    env = {key[4:]: value for key, value in sandbox.items() if key.startswith("env:")}
    work = Path(sandbox["home"])
    for language, code in _runnable(_documents()[name]):
        command = (
            ["bash", "-euo", "pipefail", "-c", _stand_in(code)]
            if language == "bash"
            else [sys.executable, "-c", _stand_in(code)]
        )
        result = subprocess.run(
            command, cwd=work, env=env, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, (
            f"{name}: this {language} block failed ({result.returncode}):\n{code}\n"
            + (result.stdout + result.stderr)[-3000:]
        )


# --- the contributor guides match the code ---------------------------------------------------

GUIDES = sorted((DOCS / "contributing").glob("*.md"))


def _resolve(dotted: str) -> object:
    """The module or attribute ``dotted`` names (``foilkit.scorers.modes.SERVING_BACKENDS``)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)  # AttributeError: the guide names what is not there
        return found
    raise ModuleNotFoundError(dotted)


def test_the_guides_cover_benchmarks_families_backends_and_parsers():
    names = {path.name for path in GUIDES}
    assert {
        "adding-a-benchmark.md",
        "adding-a-model-family.md",
        "adding-a-backend.md",
        "adding-an-answer-parser.md",
    } <= names


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: path.name)
def test_every_file_and_name_a_guide_mentions_exists(guide):
    """A guide names files (``scorers/modes.py``) and registries or symbols
    (``foilkit.scorers.modes.SERVING_BACKENDS``) exactly, so that it cannot describe a layout the
    code no longer has; a ``<name>`` placeholder is a pattern, not a file."""
    text = guide.read_text(encoding="utf-8")
    paths = {
        path
        for path in re.findall(r"`([\w.-]+(?:/[\w.*-]*)+)`", text)
        if "<" not in path and "*" not in path
    }
    missing = sorted(path for path in paths if not (REPO / path).exists())
    assert not missing, f"{guide.name} names files that do not exist: {missing}"
    names = set(re.findall(r"`(foilkit(?:\.\w+)+)`", text))
    unknown = []
    for dotted in sorted(names):
        try:
            _resolve(dotted)
        except (ImportError, AttributeError):
            unknown.append(dotted)
    assert not unknown, f"{guide.name} names what foilkit does not have: {unknown}"
    if guide.name != "index.md":
        assert paths or names, f"{guide.name} names no file or symbol: nothing to check"
