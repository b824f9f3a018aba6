//! Grafting through a `Logger`: a reference run written in full mode, then
//! a run whose graft calls read from it.

use std::path::{Path, PathBuf};

use crate::fields_gen::{Config, Keys, Mode};
use crate::logger::Logger;
use crate::schema_gen::DType;
use crate::tensor_mut::TensorMut;
use crate::warn::take_printed;

/// A directory for one test's files, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("orchlog-graft-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config(path: &Path, mode: Mode) -> Config {
    Config { file: Some(path.to_owned()), mode, created_at: Some(0), team: "t".into(), ..Config::default() }
}

/// attn_norm at layers 0-3 (2x3 f32, layer*10 + i), `wide` (5 f32) at layers 1 and 2, `ids` (3 i32) twice.
fn attn_norm(layer: u8) -> Vec<f32> {
    (0..6).map(|i| f32::from(layer) * 10.0 + i as f32 + 0.25).collect()
}

fn write_reference(dir: &Path) -> PathBuf {
    let path = dir.join("ref.bin");
    let logger = Logger::new(config(&path, Mode::Full));
    for layer in 0..4u8 {
        logger.log("attn_norm", &attn_norm(layer), Keys::new().token(0usize).layer(layer).shape(&[2, 3]));
    }
    for layer in 1..3 {
        logger.log("wide", &[1.0f32; 5], Keys::new().token(0usize).layer(layer));
    }
    for _ in 0..2 {
        logger.log("ids", &[7i32, 8, 9], Keys::new());
    }
    assert_eq!(logger.error_count(), 0);
    path
}

fn grafting(dir: &Path, reference: &Path, select: Option<&str>) -> (Logger, PathBuf) {
    let out = dir.join("run.jsonl");
    let config = Config {
        graft_from: Some(reference.display().to_string()),
        graft_select: select.map(str::to_owned),
        ..config(&out, Mode::Summary)
    };
    (Logger::new(config), out)
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().skip(1).map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn a_graft_overwrites_exactly_the_selected_tensors_and_the_log_marks_them() {
    let scratch = Scratch::new("selected");
    let reference = write_reference(&scratch.0);
    let (logger, out) = grafting(&scratch.0, &reference, Some("checkpoint=attn_norm,layer=1-2"));
    let mut ours: Vec<Vec<f32>> = (0..4).map(|_| vec![-1.0; 6]).collect();
    let grafted: Vec<bool> = (0..4u8)
        .map(|layer| {
            logger.graft(
                "attn_norm",
                &mut ours[usize::from(layer)],
                Keys::new().token(0usize).layer(layer).shape(&[2, 3]),
            )
        })
        .collect();
    assert_eq!(grafted, [false, true, true, false]);
    for layer in 0..4u8 {
        let want = if (1..=2).contains(&layer) { attn_norm(layer) } else { vec![-1.0; 6] };
        assert_eq!(ours[usize::from(layer)], want, "layer {layer}");
    }
    let written = records(&out);
    assert_eq!(written.iter().map(|r| r["grafted"].as_bool().unwrap()).collect::<Vec<_>>(), grafted);
    assert_eq!(written[1]["values"][0].as_f64(), Some(10.25));
    assert_eq!(written[1]["shape"], serde_json::json!([2, 3]));
    assert_eq!(logger.error_count(), 0);
}

#[test]
fn a_wrong_shape_leaves_the_tensor_unchanged_and_warns_once() {
    let scratch = Scratch::new("shape");
    let reference = write_reference(&scratch.0);
    let (logger, out) = grafting(&scratch.0, &reference, Some("checkpoint=wide"));
    take_printed();
    let mut x = [4.0f32; 6];
    assert!(!logger.graft("wide", &mut x, Keys::new().token(0usize).layer(1).shape(&[2, 3])));
    assert!(!logger.graft("wide", &mut x, Keys::new().token(0usize).layer(2)));
    assert_eq!(x, [4.0; 6]);
    assert_eq!(logger.error_count(), 2);
    let printed = take_printed();
    assert_eq!(
        printed,
        ["graft 'wide' token_idx=0 layer=1 rank=0 num_shards=1: the reference record is f32 [5], the tensor f32 [2,3]; \
          the tensor is left alone"]
    );
    // Both calls are logged, neither marked.
    assert_eq!(records(&out).iter().filter(|r| r["grafted"] == false).count(), 2);
}

#[test]
fn floats_convert_to_the_tensors_dtype_with_round_to_nearest_even() {
    let scratch = Scratch::new("convert");
    let reference = write_reference(&scratch.0);
    let (logger, _) = grafting(&scratch.0, &reference, Some("layer=0-2"));
    let keys = |layer: u8| Keys::new().token(0usize).layer(layer).shape(&[2, 3]);
    let mut halves = [half::f16::ZERO; 6];
    let mut doubles = [0.0f64; 6];
    let mut bf16_bits = [0u8; 12];
    assert!(logger.graft("attn_norm", &mut halves, keys(0)));
    assert!(logger.graft("attn_norm", &mut doubles, keys(1)));
    let mut raw = TensorMut::from_bytes(DType::Bf16, &[2, 3], &mut bf16_bits).unwrap();
    assert!(logger.graft("attn_norm", &mut raw, keys(2)));
    assert_eq!(halves, attn_norm(0).iter().map(|&v| half::f16::from_f32(v)).collect::<Vec<_>>()[..]);
    assert_eq!(doubles, attn_norm(1).iter().map(|&v| f64::from(v)).collect::<Vec<_>>()[..]);
    let want: Vec<u8> = attn_norm(2).iter().flat_map(|&v| half::bf16::from_f32(v).to_le_bytes()).collect();
    assert_eq!(bf16_bits[..], want[..]);
}

#[test]
fn an_integer_tensor_takes_only_its_own_dtype() {
    let scratch = Scratch::new("ints");
    let reference = write_reference(&scratch.0);
    let (logger, _) = grafting(&scratch.0, &reference, Some("checkpoint=ids"));
    // Two reference records under the key: the first call is refused, the second taken.
    let mut wider = [0i64; 3];
    let mut same = [0i32; 3];
    assert!(!logger.graft("ids", &mut wider, Keys::new()));
    assert!(logger.graft("ids", &mut same, Keys::new()));
    assert_eq!((wider, same), ([0; 3], [7, 8, 9]));
}

#[test]
fn the_nth_call_under_a_key_takes_the_nth_record_under_it_and_a_missing_one_warns() {
    let scratch = Scratch::new("occurrence");
    let path = scratch.0.join("ref.bin");
    let reference = Logger::new(config(&path, Mode::Full));
    for step in 0..2 {
        reference.log("logits", &[step as f32], Keys::new());
    }
    let (logger, _) = grafting(&scratch.0, &path, Some("checkpoint=logits"));
    take_printed();
    let mut got = Vec::new();
    for _ in 0..3 {
        let mut x = [-1.0f32];
        logger.graft("logits", &mut x, Keys::new());
        got.push(x[0]);
    }
    assert_eq!(got, [0.0, 1.0, -1.0]);
    assert_eq!(logger.error_count(), 1);
    assert_eq!(
        take_printed(),
        ["graft 'logits' rank=0 num_shards=1 (call 3 under this key): the reference holds no such record; \
          the tensor is left alone"]
    );
}

#[test]
fn without_a_selector_nothing_is_grafted_and_nothing_is_read() {
    let scratch = Scratch::new("unselected");
    let (logger, out) = grafting(&scratch.0, &scratch.0.join("absent.bin"), Some(" \t"));
    let mut x = [0.0f32; 6];
    assert!(!logger.graft("attn_norm", &mut x, Keys::new().layer(1)));
    assert_eq!((x, logger.error_count(), records(&out).len()), ([0.0; 6], 0, 1));
}

#[test]
fn an_invalid_graft_selector_grafts_nothing_but_logging_goes_on() {
    let scratch = Scratch::new("bad-select");
    let reference = write_reference(&scratch.0);
    take_printed();
    let (logger, out) = grafting(&scratch.0, &reference, Some("colour=red"));
    let mut x = [0.0f32; 6];
    assert!(!logger.graft("attn_norm", &mut x, Keys::new().token(0usize).layer(1).shape(&[2, 3])));
    assert!(logger.is_on());
    assert_eq!((logger.error_count(), records(&out).len()), (1, 1));
    assert!(take_printed()[0].starts_with("graft selector 'colour=red' is invalid"));
}

#[test]
fn a_reference_that_is_not_a_binary_stream_is_one_warning_and_harms_nothing() {
    let scratch = Scratch::new("garbage");
    let reference = write_reference(&scratch.0);
    let bytes = std::fs::read(&reference).unwrap();
    let cases: [(&str, Vec<u8>); 4] = [
        ("missing", Vec::new()),
        ("text", b"{\"orchlog\":2}\n".to_vec()),
        ("nested", vec![0x91; 1 << 20]),
        ("truncated", bytes[..bytes.len() - 30].to_vec()),
    ];
    for (name, content) in cases {
        let path = scratch.0.join(name);
        if name != "missing" {
            std::fs::write(&path, content).unwrap();
        }
        let (logger, _) = grafting(&scratch.0, &path, Some("checkpoint=attn_norm"));
        take_printed();
        let mut x = [0.0f32; 6];
        let mut other = [0.0f32; 6];
        logger.graft("attn_norm", &mut other, Keys::new().token(0usize).layer(2).shape(&[2, 3]));
        logger.graft("attn_norm", &mut x, Keys::new().token(0usize).layer(3).shape(&[2, 3]));
        let printed = take_printed();
        assert_eq!(printed.len(), 1, "{name}: {printed:?}");
        // A truncated stream keeps the records before the cut (the last `ids`).
        let want = if name == "truncated" { attn_norm(3) } else { vec![0.0; 6] };
        assert_eq!(x[..], want[..], "{name}");
        assert!(logger.is_on(), "{name}");
    }
}

#[test]
fn a_reference_damaged_after_it_was_indexed_is_refused_at_the_graft() {
    let scratch = Scratch::new("damaged-later");
    let reference = write_reference(&scratch.0);
    let (logger, _) = grafting(&scratch.0, &reference, Some("checkpoint=attn_norm"));
    let keys = |layer: u8| Keys::new().token(0usize).layer(layer).shape(&[2, 3]);
    let mut first = [0.0f32; 6];
    // The first graft indexes the reference: every frame is sound.
    assert!(logger.graft("attn_norm", &mut first, keys(0)));
    // Layer 3's tensor starts with 30.25; one bit of it flipped in place, under the run's feet.
    let mut bytes = std::fs::read(&reference).unwrap();
    let at = bytes.windows(4).position(|w| w == 30.25f32.to_le_bytes()).unwrap();
    bytes[at] ^= 0x04;
    std::fs::write(&reference, bytes).unwrap();
    take_printed();
    let mut x = [-1.0f32; 6];
    assert!(!logger.graft("attn_norm", &mut x, keys(3)));
    assert_eq!(x, [-1.0; 6]);
    let printed = take_printed();
    assert_eq!(printed.len(), 1);
    assert!(
        printed[0].ends_with("is refused: it fails its checksum (CRC-32C); the tensor is left alone"),
        "{printed:?}"
    );
}

#[test]
fn a_reference_that_is_the_log_file_is_left_as_it_is_and_nothing_is_logged() {
    let scratch = Scratch::new("reference-is-log");
    let reference = write_reference(&scratch.0);
    let before = std::fs::read(&reference).unwrap();
    take_printed();
    let logger = Logger::new(Config {
        graft_from: Some(reference.display().to_string()),
        graft_select: Some("checkpoint=*".into()),
        ..config(&reference, Mode::Full)
    });
    let mut x = [-1.0f32; 6];
    assert!(!logger.graft("attn_norm", &mut x, Keys::new().token(0usize).layer(1).shape(&[2, 3])));
    assert!(!logger.is_on());
    assert_eq!((x, std::fs::read(&reference).unwrap()), ([-1.0; 6], before));
    assert_eq!(
        take_printed(),
        [format!(
            "ORCH_LOG_FILE names the graft reference ({}): writing the run would empty it; logging is off and the \
             file is left as it is",
            reference.display()
        )]
    );
}
