"""The canonical encodings, written out plainly in Python.

This package is the executable form of schema/FORMAT.md: it produces the
exact JSONL lines and msgpack frames that every emitter must produce, and
schema/vectors/ is generated from it. It favours obviousness over speed.
"""
