"""Grading: verdicts on pairs and on the run.

tiers (each pair against its rule, and against the noise when there is one), noise (the noise table a
second reference measures), divergence (what the walk found: counts, worst pairs, the first divergence),
growth (the error by layer at a token), coverage (what went unpaired), partial (the findings of a walk
over part of the traces, merged by orchlog.scale), rerun (the command that decides an undecided pair).
"""
