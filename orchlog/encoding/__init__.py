"""The canonical encodings, written out plainly in Python.

This package is the executable form of schema/FORMAT.md: it produces the
exact JSONL lines and msgpack frames that every emitter must produce, and
schema/vectors/ is generated from it. It favours obviousness over speed.
It follows the schema tables it is given (the generated ones, or a schema
orchlog codegen has loaded), so that only what each language writes on its
own is here: number text (floats), stats, msgpack, text, the digest fields
(digest) and the frame fields (frame).
"""
