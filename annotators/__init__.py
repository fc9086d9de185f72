"""LLM annotation of documents into eval sets.

Not implemented yet: this package is reserved for the annotation pipeline
(queries of four types, coarse and fine keywords, reference answers, with
automatic checks). Importing it gives nothing to call.
"""
