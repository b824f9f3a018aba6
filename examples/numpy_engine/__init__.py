"""A small NumPy engine for the tiny Qwen2: the "engine under test" of the
end-to-end example, with switchable bugs taken from real incidents."""
