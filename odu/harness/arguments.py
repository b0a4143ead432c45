"""lm-eval's model arguments, checked before lm-eval shows them. lm-eval prints ``--model_args`` as
given (its INFO line ``Initializing ... with arguments``, the line above its results table, the
errors of its JSON parser) and writes them into its results file.

* :func:`check_model_arguments`, between parsing and running: model arguments naming a credential
  are refused at any depth (:func:`odu.io.scrub.refuse_credentials`), and where lm-eval shows them
  as given (plain ``lm_eval``), so are arguments that would not be stored as given (a URL's
  credentials, a free string of a request body: :func:`odu.io.scrub.unstored_paths`). Each refusal names where the value is, never the value. ``odu-bench lm-eval`` calls it;
  plain ``lm_eval`` through :func:`refusing_credentials`, which the start-up bridge puts around
  lm-eval's parser for our models.
* :func:`json_errors_unshown`: lm-eval's parser of JSON arguments failing without the argument's
  text (the bridge; :func:`install_json_errors_unshown` where the bridge is off).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from ..io.console import error_text
from ..io.scrub import CredentialArgumentError, ScrubbedStream, refuse_credentials, unstored_paths
from .wrapping import wrap_once


def _given(parsed: Any) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """The model names and the model arguments (with where each was given) of lm-eval's parsed
    command line (``--model``, ``--model_args``) and of its ``--config`` file. A config file lm-eval
    cannot read is left for lm-eval to report."""
    from lm_eval.config.evaluate_config import EvaluatorConfig
    from lm_eval.utils import simple_parse_args_string

    models = [getattr(parsed, "model", None)]
    found: list[tuple[str, Any]] = [("--model_args", getattr(parsed, "model_args", None))]
    if config := getattr(parsed, "config", None):
        try:
            loaded = EvaluatorConfig.load_yaml_config(config)
        except (OSError, ValueError, TypeError):
            loaded = {}
        models.append(loaded.get("model"))
        found.append((f"--config {config}: model_args", loaded.get("model_args")))
    given = [
        (where, simple_parse_args_string(args) if isinstance(args, str) else args)
        for where, args in found
        if isinstance(args, (str, dict))
    ]
    return [str(m) for m in models if m], given


def check_model_arguments(parsed: Any, shown_as_given: bool) -> None:
    """:class:`odu.io.scrub.CredentialArgumentError` when the model arguments of lm-eval's parsed
    command line name a credential, or, when lm-eval shows them as given (``shown_as_given``: plain
    ``lm_eval``), hold a value that would not be stored as given."""
    for where, args in _given(parsed)[1]:
        refuse_credentials(args, where)
        if shown_as_given and (paths := unstored_paths(args)):
            raise CredentialArgumentError(
                f"{where}: {', '.join(paths)} would be printed and written as given by plain lm_eval, and may hold "
                "a credential (a URL's user info or query, a request body's free strings: "
                "docs/harness.md#preflight-dry-run-shards-credentials): give the same arguments to odu-bench "
                "lm-eval, which keeps credentials out of what it prints and writes"
            )


def refusing_credentials(parse_args: Any) -> Any:
    """lm-eval's ``HarnessCLI.parse_args`` checking the model arguments of an ODU-Bench model as
    plain ``lm_eval`` shows them (:func:`check_model_arguments`), before lm-eval prints anything: a
    refusal is one line and exit 2. The start-up bridge puts it in place when lm-eval starts; under
    ``odu-bench lm-eval`` (its console scrubbed), which checks them itself, it steps aside."""
    from ..models import LM_EVAL_PREFIX

    @functools.wraps(parse_args)
    def parsed(self: Any) -> Any:
        args = parse_args(self)
        if isinstance(sys.stdout, ScrubbedStream) or not any(m.startswith(LM_EVAL_PREFIX) for m in _given(args)[0]):
            return args
        try:
            check_model_arguments(args, shown_as_given=True)
        except CredentialArgumentError as exc:
            prog = getattr(getattr(self, "_parser", None), "prog", "lm-eval")  # argparse's error format
            print(f"{prog}: error: {error_text(exc)}", file=sys.stderr)
            raise SystemExit(2) from None
        return args

    return parsed


def _json_problem(text: Any) -> str:
    """Where ``text`` stops being JSON (``Expecting ',' delimiter at character 54``)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at character {exc.pos}"
    except (TypeError, ValueError) as exc:
        return type(exc).__name__
    return "not a JSON object"


def json_errors_unshown(try_parse_json: Any) -> Any:
    """lm-eval's ``try_parse_json`` (its parser of ``--model_args`` and other JSON arguments)
    failing without the argument's text, which may hold a credential: an argparse error (one usage
    line and exit 2, not a traceback) saying where the JSON breaks."""

    @functools.wraps(try_parse_json)
    def parse(value: Any) -> Any:
        try:
            return try_parse_json(value)
        except ValueError:
            raise argparse.ArgumentError(
                None,
                f"an argument is not valid JSON ({_json_problem(value)}; its text is not shown, as it may hold a "
                "credential): use double quotes for JSON strings",
            ) from None

    return parse


def install_json_errors_unshown() -> None:
    """Make lm-eval's ``--model_args`` parser fail without the argument's text (:func:`json_errors_unshown`), once."""
    from lm_eval._cli import utils

    wrap_once(utils, "try_parse_json", json_errors_unshown)


__all__ = ["check_model_arguments", "install_json_errors_unshown", "json_errors_unshown", "refusing_credentials"]
