"""llama.cpp, built from the source vendored in the llama-cpp-python sdist, and a
small program that runs token ids through it (the reference engine of the
end-to-end example)."""
