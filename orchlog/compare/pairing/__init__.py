"""Pairing: from each trace's records to the pairs a compare measures.

keys (the alignment key as integer rows), sides (what maps, views, derived tensors, shards and the token
offset make of one side's records), tokens (the token ids both sides saw), align (the streaming matcher),
rounds (PairWalk: the one walk over paired records that compare, the noise table, calibration,
per-token, graft-report and the diagnosis consume), semantics (formats' own rules), window and aligned
(lining a pair's tensors up), tensors (a record's values as a flat array).
"""
