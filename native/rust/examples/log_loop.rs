//! Logs `COUNT` records (forever with `0`) of an f32 tensor of `ELEMENTS`
//! values through `orch_log!`, then reports on stdout what the host saw.
//! Tests use it to check that a failing disk, an unwritable path or a
//! `kill -9` never harm the host or the records already written.
//!
//!     ORCH_LOG_FILE=trace.jsonl cargo run --example log_loop --features orch_logging -- 1000 4096

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().expect("usage: log_loop COUNT ELEMENTS"));
    let (count, elements) = (args.next().unwrap_or(100), args.next().unwrap_or(1024));
    let mut hidden: Vec<f32> = (0..elements).map(|i| (i as f32 * 0.37).sin()).collect();
    let mut token_idx = 0u64;
    while count == 0 || token_idx < count {
        hidden[0] = token_idx as f32;
        orchlog::orch_log!("hidden", &hidden, token_idx, layer = token_idx % 4);
        if token_idx == 0 {
            // Tells a waiting parent that the first record is on disk.
            println!("started");
            let _ = std::io::stdout().flush();
        }
        token_idx += 1;
    }
    println!("logged {token_idx} records, {} errors", orchlog::error_count());
}
