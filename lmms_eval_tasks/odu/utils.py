"""lmms-eval hooks of the ODU-Bench tasks: a door onto :mod:`odu.harness.lmms` (no logic here)."""

from odu.harness.lmms import (
    METRICS,
    aggregation,
    doc_to_messages,
    doc_to_text,
    doc_to_visual,
    process_docs,
    process_results,
)

__all__ = ["doc_to_messages", "doc_to_text", "doc_to_visual", "process_results"]

docs_av = process_docs("av")
docs_ao = process_docs("ao")
docs_av_en = process_docs("av_en")
docs_av_zh = process_docs("av_zh")
docs_ao_en = process_docs("ao_en")
docs_ao_zh = process_docs("ao_zh")
docs_av_text = process_docs("av", text_only=True)
docs_ao_text = process_docs("ao", text_only=True)

# agg_m1, agg_m2, ...: the aggregation of each metric, named as the YAML's metric_list names them
globals().update({f"agg_{metric}": aggregation(metric) for metric in METRICS})
