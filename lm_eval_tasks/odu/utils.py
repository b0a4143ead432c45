"""lm-eval hooks of the ODU-Bench tasks: a door onto :mod:`odu.harness.tasks` (no logic here)."""

from odu.harness.tasks import (
    aggregation,
    doc_to_clips,
    doc_to_prompt,
    doc_to_text,
    load_docs,
    process_results,
    score_responses,
)

__all__ = ["doc_to_clips", "doc_to_prompt", "doc_to_text", "load_docs", "process_results", "score_responses"]

agg_m1 = aggregation("m1")
agg_m2 = aggregation("m2")
agg_m3 = aggregation("m3")
agg_m4 = aggregation("m4")
agg_m5 = aggregation("m5")
agg_avg = aggregation("avg")
agg_ftr = aggregation("ftr")
agg_m2_errors_as_misses = aggregation("m2_errors_as_misses")
agg_parse_errors = aggregation("parse_errors")
agg_no_output = aggregation("no_output")
agg_inference_errors = aggregation("inference_errors")
agg_truncated = aggregation("truncated")
agg_judge_error_points = aggregation("judge_error_points")
agg_judge_requests = aggregation("judge_requests")
agg_judge_cache_hits = aggregation("judge_cache_hits")
agg_judge_retries = aggregation("judge_retries")
agg_judge_errors = aggregation("judge_errors")
