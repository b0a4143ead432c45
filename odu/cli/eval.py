"""``odu-bench eval``: the whole pipeline end to end through lm-eval, with Table 3-style rows.

Dataset (the bundled sample by default, prepared into the cache on first use) -> model backend(s)
(the two floor baselines by default) -> lm-eval tasks ``odu_av`` / ``odu_ao`` -> parse, match,
judge (the offline lexical judge by default) -> metrics. For each model it writes, under
``--out`` (default ``runs/<timestamp>``), a folder with lm-eval's ``results.json``, the logged
``samples_<task>.jsonl``, ``predictions.jsonl`` (raw outputs, the ``odu-bench score`` format),
``scenes.jsonl`` + ``summary.json`` (the ``odu-bench score`` layout) and ``run_card.json``, then
prints one row per model with the audio-visual and audio-only columns of Table 3. Started as several
processes (``torchrun -m odu eval``), the ranks split the scenes and rank 0 alone writes and prints
(:mod:`odu.harness.ranks`); ``--shard auto`` takes the shard from a SLURM array or an indexed Job.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ..core.caveats import run_caveats, summary_counts
from ..io.console import error_text, inert
from ..io.scrub import install_log_filter, scrub_command, scrub_text, scrub_value
from ..judge.openai_judge import merge_judge_infos
from ..models import BACKENDS, BASELINES, backend_name, lm_eval_name, system_label
from ..runs.contract import (
    PREDICTIONS_FILE,
    RUN_CARD_NAME,
    RUNS,
    SCENES_FILE,
    EvalSceneRow,
    RunSummary,
    RunWriter,
    summarize_run,
)
from ..runs.outdir import check_target, clear
from .common import (
    add_annotation_language,
    add_overwrite,
    judge_accounting_line,
    judge_errors_exit_code,
    lm_eval_unavailable,
    runs_table,
)

DEFAULT_MODELS = ("always", "never")
DEFAULT_TASKS = ("odu_av", "odu_ao")


def _model_args(text: str | None) -> dict[str, Any]:
    """``--model-args`` as a JSON object or lm-eval's ``key=value,key=value``; one naming a
    credential is refused before anything logs it (:func:`odu.io.scrub.refuse_credentials`)."""
    from ..io.scrub import refuse_credentials

    if not text:
        return {}
    if text.lstrip().startswith("{"):
        from ..judge.spec import json_object_arg

        try:
            args = json_object_arg(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"--model-args: {exc}") from None
    else:
        try:
            from lm_eval.utils import simple_parse_args_string
        except ImportError:  # the command says so, with the fix, once it runs
            simple_parse_args_string = _key_values
        args = simple_parse_args_string(text)
    try:
        refuse_credentials(args, "--model-args")
    except ValueError as exc:  # argparse names the option itself
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--model-args: ")) from None
    return args


def _key_values(text: str) -> dict[str, Any]:
    """``k=v,k=v`` as a dict of texts (lm-eval's own parser, when lm-eval cannot be imported)."""
    return dict(pair.partition("=")[::2] for pair in text.split(",") if pair)


def add_parser(sub: argparse._SubParsersAction) -> None:
    from ..judge.spec import add_judge_arguments

    p = sub.add_parser("eval", help="run models on ODU-Bench end to end through lm-eval and print Table 3-style rows")
    data = p.add_mutually_exclusive_group()
    data.add_argument(
        "--sample",
        action="store_true",
        help="the bundled offline sample (default without --dataset, $ODU_DATASET or a prepared ./odu-bench here)",
    )
    data.add_argument(
        "--dataset", metavar="DIR|REPO", help="a prepared dataset directory or Hub repo (odu-bench prepare / download)"
    )
    p.add_argument("--revision", help="dataset revision (Hub repos)")
    p.add_argument(
        "--model",
        default=",".join(DEFAULT_MODELS),
        metavar="NAME[,NAME]",
        help=f"backend(s): {', '.join(BACKENDS)}, or lm-eval's names for them (odu-openai, ...) "
        f"(default: {','.join(DEFAULT_MODELS)}, the floor baselines)",
    )
    p.add_argument(
        "--model-args",
        type=_model_args,
        default={},
        metavar="ARGS",
        help="backend arguments, JSON or key=value,... (e.g. model=qwen3-omni,base_url=http://localhost:8000/v1)",
    )
    p.add_argument(
        "--tasks",
        default=",".join(DEFAULT_TASKS),
        metavar="TASK[,TASK]",
        help="lm-eval tasks (default odu_av,odu_ao; also odu_av_en ... odu_ao_zh, odu_av_text, odu_ao_text)",
    )
    p.add_argument(
        "--asr", metavar="PATH|openai:MODEL", help="ASR input of the text-only tasks (sidecar JSONL or endpoint)"
    )
    p.add_argument("--asr-base-url", metavar="URL", help="OpenAI-compatible server of --asr openai:MODEL")
    p.add_argument(
        "--limit", type=int, metavar="N", help="first N scenes per task (a smoke test, flagged in the run card)"
    )
    p.add_argument(
        "--use-cache", metavar="PATH", help="lm-eval response cache (sqlite prefix): reruns send no model requests"
    )
    add_annotation_language(p)
    p.add_argument(
        "--out", metavar="DIR", help="output folder, new or empty (default runs/<timestamp>; see --overwrite)"
    )
    add_overwrite(p)
    p.add_argument(
        "--verbosity",
        default="ERROR",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="lm-eval's log level (default ERROR)",
    )
    p.add_argument(
        "--allow-inference-errors",
        action="store_true",
        help="exit 0 even when some scenes got no answer from the model (they are reported and scored as no output)",
    )
    p.add_argument(
        "--allow-truncated",
        action="store_true",
        help="exit 0 even when answers were cut at the output-token limit (they are reported, and read as parse errors)",
    )
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the check of the judge and model servers before the first scene (model arg preflight=false)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="run shard K of N only (scenes split by the SHA-256 of their id); odu-bench merge joins the N runs. "
        "auto: K and N of this SLURM array task ($SLURM_ARRAY_TASK_ID); auto/N: K of this SLURM task or "
        "Kubernetes indexed Job pod ($JOB_COMPLETION_INDEX)",
    )
    cost = p.add_argument_group("dry run (nothing is sent)")
    cost.add_argument(
        "--dry-run",
        action="store_true",
        help="print requests, media seconds, estimated tokens per provider (and cost with prices); send nothing",
    )
    cost.add_argument("--json", action="store_true", help="with --dry-run: print the estimate as JSON")
    for who in ("", "judge-"):
        for side in ("in", "out"):
            cost.add_argument(
                f"--{who}price-{side}",
                type=float,
                metavar="PRICE",
                help=f"{'judge ' if who else ''}price per million {side}put tokens"
                + (f" (default --price-{side})" if who else ""),
            )
    add_judge_arguments(p)
    p.set_defaults(run=run)


# --- results -> files and rows --------------------------------------------------------------------------


def write_model_outputs(results: Mapping[str, Any], writer: RunWriter) -> list[EvalSceneRow]:
    """results.json, samples_<task>.jsonl and predictions.jsonl of one model's run, into its run
    directory: every URL of lm-eval's results shown by the one rule, known secrets out of every
    file (:mod:`odu.io.scrub`); returns the scene rows with their inference errors (one per scene,
    however many tasks held it), in dataset order (lm-eval gathers the samples of several ranks rank by rank)."""
    writer.json("results.json", scrub_value({k: v for k, v in results.items() if k != "samples"}), default=str)
    rows: dict[str, EvalSceneRow] = {}
    outputs: dict[str, str | None] = {}
    for task, task_samples in results.get("samples", {}).items():
        with writer.jsonl(f"samples_{task}.jsonl") as samples:
            for sample in sorted(task_samples, key=lambda s: s["doc_id"]):
                samples.write(sample, default=str)  # known secrets scrubbed as written (odu.io.jsonio)
                scored = sample["filtered_resps"][0]
                sid = scored["scene"]["scene_id"]
                outputs.setdefault(sid, scored["raw_output"])
                row = {**scored["scene"], "inference_error": scored["inference_error"]}
                rows.setdefault(sid, cast(EvalSceneRow, row | {"truncated": bool(scored.get("truncated"))}))
    with writer.jsonl(PREDICTIONS_FILE) as predictions:
        for sid, output in outputs.items():
            predictions.write({"scene_id": sid, "output": output})
    return list(rows.values())


def summary_of(
    rows: Sequence[EvalSceneRow],
    results: Mapping[str, Any],
    judge: Mapping[str, Any],
    annotation_language: str,
    limit: int | None = None,
    shard: str | None = None,
    system: str | None = None,
) -> RunSummary:
    """``summary.json`` in the ``odu-bench score`` layout (:func:`odu.runs.contract.summarize_run`: inference
    errors counted), plus the system's name, the answers cut at the output-token limit, the per-task
    metrics lm-eval reported, the dataset each task read and the caveats of the numbers
    (:mod:`odu.core.caveats`)."""
    summary = summarize_run(rows, judge, annotation_language)
    summary["tasks"] = {
        task: {k.split(",")[0]: v for k, v in metrics.items() if "," in k and "_stderr" not in k}
        for task, metrics in results["results"].items()
    }
    if system:
        summary["system"] = system
    summary["truncated"] = sum(bool(r.get("truncated")) for r in rows)
    summary["dataset"] = dict((results.get("odu") or {}).get("datasets") or {})
    total = sum((n or {}).get("original") or 0 for n in (results.get("n-samples") or {}).values())
    summary["caveats"] = run_caveats(
        judge, summary_counts(summary), limit=limit, shard=shard, truncated=summary["truncated"], n_total=total
    )
    return summary


def dry_run(args: argparse.Namespace, models: Sequence[str], loaded: Sequence[Any]) -> int:
    """``--dry-run``: the estimate of :mod:`odu.runs.estimate` for the loaded tasks' docs (``--limit``
    applied), as a table or ``--json``, then the checks the real run makes before and while sending
    (:func:`dry_checks`); nothing is sent. Exit 2 when the real run would refuse the setup or a scene."""
    import json

    from ..core.schema import scene_from_dict
    from ..runs.estimate import estimate, render

    docs = []
    for obj in loaded:
        for task in obj.get_all_tasks() if hasattr(obj, "get_all_tasks") else [obj]:
            docs += list(task.eval_docs)[: args.limit] if args.limit else list(task.eval_docs)
    scenes = [(scene_from_dict(json.loads(d["record"])), bool(d.get("asr"))) for d in docs]
    remote = [m for m in models if m not in BASELINES]
    llm_judge = str(args.judge or "").startswith("openai:")
    result = estimate(
        scenes,
        models=len(remote),
        judge_runs=len(models) if llm_judge else 0,
        annotation_language=args.annotation_language,
    ).as_dict(
        args.price_in,
        args.price_out,
        judge_price_in=args.judge_price_in if args.judge_price_in is not None else args.price_in,
        judge_price_out=args.judge_price_out if args.judge_price_out is not None else args.price_out,
    )
    print(json.dumps(result, indent=2) if args.json else render(result))
    return dry_checks(remote, args.model_args, docs)


def dry_checks(models: Sequence[str], model_args: Mapping[str, Any], docs: Sequence[Mapping[str, Any]]) -> int:
    """Each remote backend of ``models`` built from ``model_args`` as the real run builds it (its
    refusals raise the real run's ``ValueError``, exit 2), but without its API key, which a dry run
    does not need (a key variable that is not set is said, not refused), asked what it would refuse
    of the docs' scenes (:meth:`odu.models.base.Backend.dry_check`): those print as the real run's
    inference errors, exit 2. Backends that run in-process (their weights would load) are not built."""
    from ..harness.models import backend_options
    from ..harness.tasks import scene_request
    from ..models import backend_class, make_backend
    from ..models.remote import RemoteBackend
    from ..transport.openai_client import sending_nothing

    requests = [scene_request(d, with_asr=False) for d in docs]
    code = 0
    for model in models:
        if not issubclass(backend_class(model), RemoteBackend):
            continue
        options = {k: v for k, v in backend_options(model_args, model).items() if k != "preflight"}
        with sending_nothing():
            backend = make_backend(model, **options)
        assert isinstance(backend, RemoteBackend)
        try:
            problems = backend.dry_check(requests)
        finally:
            backend.close()
        label = str(options.get("model") or model)
        if backend.client.missing_key:
            print(
                f"odu-bench eval: {inert(label)}: {backend.client.missing_key}: the real run needs it", file=sys.stderr
            )
        for problem in problems:
            print(
                scrub_text(f"odu-bench eval: error: {inert(label)}: inference error: {inert(problem)}"), file=sys.stderr
            )
        if problems:
            print(
                f"odu-bench eval: error: {inert(label)}: the real run would refuse {len(problems)} scene(s) (above)",
                file=sys.stderr,
            )
            code = 2
    return code


# --- the command -------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """The command (its console and log records scrubbed by :func:`odu.cli.main`)."""
    try:
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager
        from lm_eval.utils import setup_logging

        import odu.harness.models  # noqa: F401  # registers the odu-* models
    except ImportError as exc:
        return lm_eval_unavailable(exc, "eval")

    from ..data.prepare import check_dataset
    from ..data.sample import sample_dataset_dir
    from ..harness.errors import run_errors
    from ..harness.folders import task_dir
    from ..harness.ranks import launched_rank
    from ..harness.runcard import RECORDER, build_run_card
    from ..harness.tasks import dataset_choice, load_tasks, use_judge
    from ..judge.spec import judge_from_args, judge_inputs
    from ..runs.shards import AUTO, LOGGED_TASKS_KEY, SHARD_KEY, parse_shard, shard_from_env

    try:
        models = [backend_name(m.strip()) for m in args.model.split(",") if m.strip()]
    except ValueError as exc:
        print(f"odu-bench eval: error: {error_text(exc)}", file=sys.stderr)
        return 2
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    out = Path(args.out or Path("runs") / time.strftime("%Y%m%d-%H%M%S"))
    setup_logging(args.verbosity)  # before the run: lm-eval 0.4.13 applies simple_evaluate(verbosity=) only after it
    for handler in logging.getLogger("lm_eval").handlers:  # made once per process: this command's console now
        if type(handler) is logging.StreamHandler:
            handler.stream = sys.stderr  # not setStream: it flushes the old stream, which may be closed
    install_log_filter()  # lm-eval's handler: no credential of a URL reaches a log line
    command = ["odu-bench", *scrub_command(sys.argv[1:])]
    try:
        if args.json and not args.dry_run:
            raise ValueError("--json goes with --dry-run")
        if args.shard and args.shard.partition("/")[0] == AUTO:  # the shard of this SLURM array task / indexed Job pod
            (k, n), where = shard_from_env(args.shard, os.environ)
            print(f"odu-bench eval: --shard {args.shard}: shard {k}/{n} ({where})", file=sys.stderr)
            args.shard = f"{k}/{n}"
        shard = parse_shard(args.shard) if args.shard else None
        if shard and args.limit:
            raise ValueError("--limit with --shard: the shards' first N scenes are not the run's first N; drop one")
        source, reason = (str(sample_dataset_dir()), "--sample") if args.sample else dataset_choice(args.dataset)
        metadata = {
            "dataset": source,
            "dataset_revision": args.revision,
            "asr": args.asr,
            "asr_base_url": args.asr_base_url,
            "shard": args.shard,
        }
        manager = TaskManager(
            include_path=str(task_dir()),
            include_defaults=False,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )
        missing = [t for t in tasks if t not in manager.all_tasks]
        if missing:
            raise ValueError(
                f"unknown task(s) {', '.join(missing)}; ODU-Bench tasks: {', '.join(sorted(manager.all_tasks))}"
            )
        check_dataset(source)
        if args.dry_run:
            return dry_run(args, models, load_tasks(manager, tasks))
        inputs = [source, args.asr, args.use_cache, *judge_inputs(args)]
        primary = launched_rank() == 0  # started as several processes: rank 0 alone gets the results and writes
        cleared = not primary or not check_target(out, RUNS, inputs=inputs, overwrite=args.overwrite)
        judge_from_args(args).close()  # the judge's options and its verdict cache checked before any inference
        RECORDER.clear()
        loaded = load_tasks(manager, tasks)  # each task's data loaded and prepared once, for every model
        systems: dict[str, RunSummary] = {}
        judge_errors = inference_errors = truncated = 0
        for model in models:
            RECORDER.clear("judges")  # the datasets (and ASR) recorded while loading hold for every model
            label = system_label(model, args.model_args)
            folder = out / re.sub(r"[^A-Za-z0-9._-]+", "_", model if model in BASELINES else f"{model}-{label}")
            model_args = {} if model in BASELINES else dict(args.model_args)
            if args.no_preflight:
                model_args["preflight"] = False
            with use_judge(lambda: judge_from_args(args), args.annotation_language):
                results = simple_evaluate(
                    model=lm_eval_name(model),
                    model_args=model_args,
                    tasks=loaded,
                    task_manager=manager,
                    limit=args.limit,
                    use_cache=args.use_cache,
                    log_samples=True,
                    bootstrap_iters=0,
                )
            if not primary:  # this rank's scenes were gathered to rank 0
                continue
            if not cleared:  # --overwrite: the old run goes once the first new one is ready to be written
                clear(out, RUNS)
                cleared = True
            with RunWriter(folder) as writer:
                rows = write_model_outputs(results, writer)
                judge = merge_judge_infos(list(RECORDER.judges.values()))
                summary = summary_of(rows, results, judge, args.annotation_language, args.limit, args.shard, label)
                with writer.jsonl(SCENES_FILE) as scenes:
                    for row in rows:
                        scenes.write(row)
                extra: dict[str, Any] = {"command": command, LOGGED_TASKS_KEY: list(results.get("samples", {}))}
                if shard:
                    extra[SHARD_KEY] = {"index": shard[0], "count": shard[1]}
                card = build_run_card(results, RECORDER, extra=extra)
                writer.json(RUN_CARD_NAME, scrub_value(card), default=str)
                writer.commit(summary)
            systems[label] = summary
            judge_errors += summary["judge_errors"]
            inference_errors += summary["inference_errors"]
            truncated += summary["truncated"]
            print(
                f"{inert(label)}: {len(rows)} scenes, {summary['parse_errors']} parse errors"
                + (f" ({summary['truncated']} of them answers cut at max_tokens)" if summary["truncated"] else "")
                + f", {summary['inference_errors']} inference errors, {summary['judge_errors']} judge errors -> {folder}",
                file=sys.stderr,
            )
            for error, count in Counter(r["inference_error"] for r in rows if r["inference_error"]).most_common(3):
                print(scrub_text(f"  inference error ({count} scene(s)): {inert(error)}"), file=sys.stderr)
            if line := judge_accounting_line(judge):
                print(line, file=sys.stderr)
    except run_errors() as exc:  # bad input, a server that fails or refuses, a missing extra
        print(scrub_text(f"odu-bench eval: error: {error_text(exc)}"), file=sys.stderr)
        return 2
    if not primary:
        return 0
    print(runs_table(systems))
    print(f"dataset: {inert(source)} ({inert(reason)})")
    print(f"results: {inert(out)}")
    code = judge_errors_exit_code(judge_errors, args, "eval")
    if inference_errors and not args.allow_inference_errors:
        print(
            f"odu-bench eval: {inference_errors} scene(s) got no answer from the model (scored as no output; "
            "reasons above and in samples_<task>.jsonl). With --use-cache a rerun retries only them; "
            "or pass --allow-inference-errors.",
            file=sys.stderr,
        )
        code = 1
    if truncated and not args.allow_truncated:
        print(
            f"odu-bench eval: {truncated} answer(s) were cut at the output-token limit and read as parse errors "
            "(caveats above). Raise the limit (lm_eval / odu-bench lm-eval: --gen_kwargs max_gen_toks=N; the "
            "gemini and realtime backends: --model-args max_output_tokens=N) and run again, or pass --allow-truncated.",
            file=sys.stderr,
        )
        code = 1
    return code
