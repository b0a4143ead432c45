"""lmms-eval hooks of the ODU-Bench tasks: a door onto :mod:`odu.harness.lmms` (no logic here)."""

from odu.harness.lmms import aggregation, doc_to_messages, doc_to_text, doc_to_visual, process_docs, process_results

__all__ = ["doc_to_messages", "doc_to_text", "doc_to_visual", "process_results"]

docs_av = process_docs("av")
docs_ao = process_docs("ao")
docs_av_en = process_docs("av_en")
docs_av_zh = process_docs("av_zh")
docs_ao_en = process_docs("ao_en")
docs_ao_zh = process_docs("ao_zh")
docs_av_text = process_docs("av", text_only=True)
docs_ao_text = process_docs("ao", text_only=True)

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
agg_judge_error_points = aggregation("judge_error_points")
agg_judge_requests = aggregation("judge_requests")
agg_judge_cache_hits = aggregation("judge_cache_hits")
agg_judge_retries = aggregation("judge_retries")
agg_judge_errors = aggregation("judge_errors")
