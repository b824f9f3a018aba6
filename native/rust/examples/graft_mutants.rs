//! Grafts one plan of calls from each of many references, in one process:
//! what tests/fuzz/test_graft_mutants.py runs against a corpus of damaged
//! references (the C++ twin is tests/native/programs/graft_mutants.cpp, and
//! the protocol is the same).
//!
//!     graft_mutants PLAN REFERENCES
//!
//! PLAN has one graft call a line: checkpoint, token_idx, layer (-1: none),
//! dtype and the dimensions joined by commas, separated by tabs. REFERENCES
//! names one reference a line. For each reference a new `Logger` is made
//! (logging to /dev/null, every call selected), each call's tensor starts as
//! bytes 0xA5 (GRAFT_MUTANTS_LOG, when set, names the log file instead of
//! /dev/null, written in full mode), and one line is printed: a 0 or 1 per call (what graft
//! returned), a tab, and each tensor's bytes after the call in hex, joined by
//! commas. A logger that turned itself off during the calls (a panic caught
//! inside orchlog) prints `off` instead, which the test counts as a failure.
//! Last, on stderr, the process's peak resident memory (VmHWM), where Linux
//! tells it.

use std::fmt::Write as _;

use orchlog::{Config, DType, Keys, Logger, Mode, TensorMut};

struct Call {
    checkpoint: String,
    token: i64,
    layer: i64,
    dtype: DType,
    dims: Vec<usize>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, plan, references] = &args[..] else { panic!("usage: graft_mutants PLAN REFERENCES") };
    let calls: Vec<Call> = std::fs::read_to_string(plan)
        .unwrap()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            Call {
                checkpoint: f[0].to_owned(),
                token: f[1].parse().unwrap(),
                layer: f[2].parse().unwrap(),
                dtype: DType::from_name(f[3]).unwrap(),
                dims: f[4].split(',').filter(|d| !d.is_empty()).map(|d| d.parse().unwrap()).collect(),
            }
        })
        .collect();
    for reference in std::fs::read_to_string(references).unwrap().lines() {
        let logger = Logger::new(Config {
            file: Some(std::env::var_os("GRAFT_MUTANTS_LOG").unwrap_or_else(|| "/dev/null".into()).into()),
            mode: Mode::Full,
            team: "mutants".into(),
            graft_from: Some(reference.to_owned()),
            graft_select: Some("checkpoint=*".into()),
            ..Config::default()
        });
        let was_on = logger.is_on();
        let (mut flags, mut tensors) = (String::new(), Vec::new());
        for call in &calls {
            let numel: usize = call.dims.iter().product();
            let mut buffer = vec![0xa5u8; numel * call.dtype.size()];
            let mut keys = Keys::new().shape(&call.dims);
            if call.token >= 0 {
                keys = keys.token(call.token);
            }
            if call.layer >= 0 {
                keys = keys.layer(call.layer);
            }
            let mut tensor = TensorMut::from_bytes(call.dtype, &call.dims, &mut buffer).unwrap();
            flags.push(if logger.graft(&call.checkpoint, &mut tensor, keys) { '1' } else { '0' });
            let mut text = String::new();
            for b in &buffer {
                let _ = write!(text, "{b:02x}");
            }
            tensors.push(text);
        }
        if was_on && !logger.is_on() {
            println!("off");
        } else {
            println!("{flags}\t{}", tensors.join(","));
        }
    }
    // This process's own peak (VmHWM starts afresh at exec, unlike getrusage's maxrss).
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
        eprintln!("graft_mutants: peak {line}");
    }
}
