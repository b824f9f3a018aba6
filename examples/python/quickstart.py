import numpy as np

import orchlog

orchlog.configure(path="trace_py.jsonl", team="my-engine")
hidden = np.linspace(-1, 1, 896, dtype=np.float32)
for token in range(4):
    orchlog.log("embedding", hidden * token, token_idx=token)
    orchlog.log("attn_out", hidden, token_idx=token, layer=0, stage="add", step=0)

trace = orchlog.open_trace("trace_py.jsonl")
print(sum(1 for _ in trace), "records from", trace.headers[0]["producer"]["language"])
