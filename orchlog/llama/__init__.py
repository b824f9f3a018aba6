"""orchlog.llama: llama.cpp as a reference engine, with no code to write.

`trace_llama` (orchlog/llama/trace.py, behind `orchlog trace llama`) builds the driver program that
ships here (run_tokens.cpp: llama.cpp with orchlog's ggml adapter) against the pinned llama.cpp
(build.py: built once per user from the llama-cpp-python sdist on PyPI, cached) or the user's own
install, and runs a prompt through it into a trace.
"""
