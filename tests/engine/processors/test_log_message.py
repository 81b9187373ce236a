"""LogMessage: the message it logs, at which level, and that FlowFiles pass on unchanged."""

from __future__ import annotations

import logging

from engine.testing import ProcessorTestRunner


def test_logs_the_evaluated_message_with_its_prefix_at_the_evaluated_level(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    properties = {"Log Level": "${level}", "Log Prefix": "[${source}] ", "Log Message": "order ${id} arrived"}
    with ProcessorTestRunner("LogMessage", tmp_path, properties) as runner:
        runner.enqueue(b"body", level="WARN", source="shop", id="17")
        runner.run()
        (out,) = runner.output("success")
        assert runner.content(out) == b"body"
        (record,) = [r for r in caplog.records if "arrived" in r.getMessage()]
        assert record.levelno == logging.WARNING
        assert record.getMessage().endswith("[shop] order 17 arrived")
        assert any("[shop] order 17 arrived" in bulletin for bulletin in runner.bulletins)


def test_a_blank_prefix_is_left_out_and_info_makes_no_bulletin(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    with ProcessorTestRunner("LogMessage", tmp_path, {"Log Prefix": "${missing}", "Log Message": "hello"}) as runner:
        runner.enqueue(b"")
        runner.run()
        assert len(runner.output("success")) == 1
        (record,) = [r for r in caplog.records if r.getMessage().endswith("hello")]
        assert record.levelno == logging.INFO
        assert runner.bulletins == []


def test_an_unknown_evaluated_level_fails_the_task_and_keeps_the_flowfile(tmp_path):
    with ProcessorTestRunner("LogMessage", tmp_path, {"Log Level": "${level}", "Log Message": "x"}) as runner:
        runner.enqueue(b"", level="loud")
        runner.run()
        assert runner.output("success") == []
        assert len(runner.input_flowfiles()) == 1
        assert any("'loud'" in bulletin for bulletin in runner.bulletins)


def test_a_fixed_unknown_level_is_invalid_and_nifi_1_names_load(tmp_path):
    with ProcessorTestRunner("LogMessage", tmp_path, {"Log Level": "loud"}) as runner:
        (problem,) = runner.validate()
        assert "must be either trace, debug, info, warn or error" in problem
    with ProcessorTestRunner("LogMessage", tmp_path / "b", {"log-level": "error", "log-message": "m"}) as runner:
        assert runner.validate() == []
