"""``foilkit.video_paths``: the one resolver every reader of video paths uses (issue 35)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import foilkit.video_paths
from foilkit.video_paths import (
    VideoPathError,
    named_roots,
    resolve_video_path,
    video_roots_for,
)


def test_doctests():
    assert doctest.testmod(foilkit.video_paths).failed == 0


@pytest.fixture
def layout(tmp_path) -> dict[str, Path]:
    """Roots ``a`` (holding ``x.mp4``) and ``b`` (holding ``y.mp4``), ``link`` a symlink to ``a``,
    and ``secret/z.mp4`` beside them."""
    for name in ("a/x.mp4", "b/y.mp4", "secret/z.mp4"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    return {name: tmp_path / name for name in ("a", "b", "link", "secret")}


def test_a_relative_path_resolves_under_the_first_root_holding_it(layout):
    roots = [layout["a"], layout["b"]]
    assert resolve_video_path("y.mp4", roots) == layout["b"] / "y.mp4"
    assert resolve_video_path("x.mp4", roots) == layout["a"] / "x.mp4"
    # found nowhere: its place under the first root (decoding then says it is missing)
    assert resolve_video_path("none.mp4", roots) == layout["a"] / "none.mp4"


def test_an_absolute_path_must_lie_inside_a_root(layout):
    inside = layout["b"] / "y.mp4"
    assert resolve_video_path(str(inside), [layout["a"], layout["b"]]) == inside
    with pytest.raises(VideoPathError, match="is not inside the video root "):
        resolve_video_path(str(layout["secret"] / "z.mp4"), [layout["a"]])


def test_a_symlinked_root_works_and_a_path_through_it_is_judged_by_its_target(layout):
    assert resolve_video_path("x.mp4", [layout["link"]]) == layout["link"] / "x.mp4"
    assert resolve_video_path(str(layout["a"] / "x.mp4"), [layout["link"]]) == layout["a"] / "x.mp4"


def test_the_refusal_reads_the_same_whether_or_not_the_file_exists(layout):
    words = []
    for name in ("z.mp4", "absent.mp4"):
        with pytest.raises(VideoPathError) as error:
            resolve_video_path(str(layout["secret"] / name), [layout["a"]])
        words.append(str(error.value).replace(name, "NAME"))
    assert words[0] == words[1]


def test_no_root_refuses_every_path_and_none_leaves_it_as_given(layout):
    with pytest.raises(VideoPathError, match="cannot be read: no video root was named; "):
        resolve_video_path("x.mp4", [])
    assert resolve_video_path("/anywhere/v.mp4", None) == Path("/anywhere/v.mp4")


def test_which_roots_apply(layout, tmp_path):
    assert named_roots("~/videos") == [Path.home() / "videos"]
    assert named_roots([layout["a"], str(layout["a"]), layout["b"]]) == [layout["a"], layout["b"]]
    assert video_roots_for([layout["b"]], str(layout["a"])) == [layout["b"]]  # named ones win
    assert video_roots_for(None, str(layout["a"])) == [layout["a"]]  # no videos/ in it
    (layout["a"] / "videos").mkdir()
    assert video_roots_for(None, str(layout["a"])) == [layout["a"], layout["a"] / "videos"]
    assert video_roots_for(None, "someone/hub-dataset") == []
    assert video_roots_for(None, None) == []  # built by foilkit: only the named root
    assert video_roots_for(None, object()) is None  # a dataset object: the caller's own paths
