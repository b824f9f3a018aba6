"""A tiny random-weight Qwen2, made locally: the model every engine of the
end-to-end example runs (llama.cpp, HF transformers, the NumPy engine)."""
