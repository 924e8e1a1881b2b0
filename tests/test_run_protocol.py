"""A run of several configs records its protocol truthfully: a setting its configs resolved
differently (TempCompass' answer parser per task type in generate mode) is named per config in
``results.json`` and the report, never one config's value claimed for all."""

from __future__ import annotations

from foilkit.evaluation import _run_protocol
from foilkit.report import protocol_lines
from foilkit.run import ConfigResults, protocol_from_record
from foilkit.scorers.protocols import resolve_protocol
from foilkit.scorers.record import ScoringRun

CONFIGS = ("multi_choice", "yes_no", "caption_matching")


def _configs(mode: str) -> dict[str, ConfigResults]:
    """Each config as ``evaluate`` keeps it: its scoring record holds the protocol it resolved."""
    return {
        config: ConfigResults(
            num_rows=2,
            metrics={},
            score=ScoringRun.from_record(
                {
                    "protocol": resolve_protocol(
                        "paper", "tempcompass", "video-llm", {"mode": mode}, config=config
                    ).to_record()
                }
            ),
        )
        for config in CONFIGS
    }


def test_each_configs_parser_is_recorded_for_a_run_of_all_configs():
    protocol = _run_protocol(_configs("generate"))
    parsers = {config: f"tempcompass_{config}" for config in CONFIGS}
    assert "parser" not in protocol.settings and protocol.per_config == {"parser": parsers}
    assert protocol.settings["mode"] == "generate"  # what the configs share stays
    assert protocol_from_record(protocol.to_record()) == protocol  # as results.json reads back
    assert "Per config: parser `tempcompass_multi_choice` (multi_choice), " in "".join(
        protocol_lines(protocol)
    )


def test_configs_that_resolve_alike_record_one_protocol():
    configs = _configs("choice")
    protocol = _run_protocol(configs)
    assert protocol == configs["multi_choice"].score.protocol and not protocol.per_config
    assert "per_config" not in protocol.to_record()
    assert "Per config:" not in "".join(protocol_lines(protocol))
