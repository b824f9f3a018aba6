// orchlog: record tensors at checkpoints of a forward pass so that two
// engines can be compared record by record. The one header to include.
//
//   #include <orchlog/orchlog.hpp>
//   ORCH_LOG_TOKEN("attn_norm", token_idx, x, "f32", n_tokens, 896);   // needs -DORCH_LOGGING
//
// Run with ORCH_LOG_FILE=trace.jsonl (and ORCH_LOG_TEAM, ORCH_LOG_VALUES,
// ORCH_LOG_MODE, ORCH_LOG_SELECT ...). See docs/cpp.md.
#pragma once

#include "orchlog/api_gen.hpp"
#include "orchlog/blake3.hpp"
#include "orchlog/cuda.hpp"
#include "orchlog/encode.hpp"
#include "orchlog/graft.hpp"
#include "orchlog/logger.hpp"
#include "orchlog/macros.hpp"
#include "orchlog/options.hpp"
#include "orchlog/types.hpp"
