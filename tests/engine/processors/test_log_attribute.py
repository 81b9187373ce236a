"""LogAttribute: what it logs, at which level, and that it passes FlowFiles on unchanged."""

from __future__ import annotations

import logging

from engine.testing import ProcessorTestRunner


def test_logs_selected_attributes_and_payload_then_passes_the_flowfile_on(tmp_path, caplog):
    properties = {"Log Level": "warn", "Log Payload": "true", "Attributes to Ignore": "secret",
                  "attributes-to-log-regex": "a.*|secret|filename", "Log prefix": "audit-${kind}"}
    caplog.set_level(logging.INFO)
    with ProcessorTestRunner("LogAttribute", tmp_path, properties) as runner:
        original = runner.enqueue(b"payload text", alpha="1", beta="2", secret="s3cr3t", kind="k")
        runner.run()
        (out,) = runner.output("success")
        assert out == original._replace(last_queue_date=out.last_queue_date, queue_date_index=out.queue_date_index)
        (record,) = [r for r in caplog.records if "logging for flow file" in r.getMessage()]
        message = record.getMessage()
        assert record.levelno == logging.WARNING
        assert "Key: 'alpha'" in message and "Key: 'filename'" in message
        assert "beta" not in message and "s3cr3t" not in message
        assert "payload text" in message and "audit-k" in message and "fileSize" in message
        assert any("payload text" in bulletin for bulletin in runner.bulletins), "a warning also makes a bulletin"


def test_single_line_format_without_properties(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    properties = {"Output Format": "Single Line", "Log FlowFile Properties": "false"}
    with ProcessorTestRunner("LogAttribute", tmp_path, properties) as runner:
        runner.enqueue(b"", color="blue")
        runner.run()
        (message,) = [r.getMessage() for r in caplog.records if "logging for flow file" in r.getMessage()]
        assert "'color': 'blue'" in message and "fileSize" not in message
        assert runner.bulletins == [], "info messages are below the bulletin level"


def test_invalid_regular_expression_is_reported(tmp_path):
    with ProcessorTestRunner("LogAttribute", tmp_path, {"attributes-to-ignore-regex": "("}) as runner:
        (problem,) = runner.validate()
        assert problem.startswith("'attributes-to-ignore-regex' invalid regular expression '('")
