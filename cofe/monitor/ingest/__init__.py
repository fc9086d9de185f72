"""Spans in: the OTLP/HTTP receiver, span files, adapters recording straight to the store,
and the decoding, repair and assembly of spans into one stage record per trace."""
