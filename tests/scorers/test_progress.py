"""Progress when stderr is not a terminal (a log, CI): one line per phase, no bars, no escapes."""

from __future__ import annotations

from foilkit.scorers.api import score


def test_a_run_logged_to_a_file_prints_one_line_per_phase(tiny_model, benchmark, capfd):
    score(tiny_model("clip"), benchmark, num_workers=0, use_cache=False, progress=True)
    out, err = capfd.readouterr()
    assert err.splitlines()[0] == "scoring 9 rows of 4 videos"
    assert "\x1b[" not in err and "\r" not in err  # no redrawn bars, no cursor escapes
    assert err.splitlines()[-1].startswith("scored 9 rows (0 failed)") and out == ""


def test_no_progress_prints_nothing(tiny_model, benchmark, capfd):
    score(tiny_model("clip"), benchmark, num_workers=0, use_cache=False, progress=False)
    assert capfd.readouterr() == ("", "")
