"""A hunt against a quantized reference: llama.cpp on a Q8_0 (or Q4_K_M, F16) GGUF
of a random model at Qwen2-0.5B widths, a second reference run on the f32 file,
and an engine computing in float32 on the quantized file's weights."""
