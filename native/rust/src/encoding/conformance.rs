//! Every record and header vector in `schema/vectors/`, reproduced byte for
//! byte: the JSONL line, the msgpack frame and the BLAKE3.

use serde_json::Value;

use crate::encoding::json::{header_line, record_line};
use crate::encoding::msgpack::{header_frame, record_frame};
use crate::encoding::record::{canonical_meta, KeepValues};
use crate::fields_gen::{header_view_from_vector, record_key_from_vector, record_view, Digest};
use crate::schema_gen::{DType, MetaEntry, MetaValue};
use crate::tensor::Tensor;
use crate::test_vectors;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// Meta as the vectors write it: floats tagged `{"f64": text}` so that
/// integral and non-finite floats keep their type.
fn meta_entries(doc: &Value) -> Vec<MetaEntry<'_>> {
    let parse_f64 = |text: &str| match text {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        _ => text.parse().unwrap(),
    };
    doc.as_object()
        .unwrap()
        .iter()
        .map(|(key, v)| MetaEntry {
            key,
            value: match v {
                Value::Bool(b) => MetaValue::Bool(*b),
                Value::Number(n) => MetaValue::Int(n.as_i64().unwrap()),
                Value::String(s) => MetaValue::Str(s),
                Value::Object(tagged) => MetaValue::Float(parse_f64(tagged["f64"].as_str().unwrap())),
                other => panic!("meta value {other}"),
            },
        })
        .collect()
}

fn keep(values: &Value) -> KeepValues {
    match values.as_i64().unwrap() {
        -1 => KeepValues::All,
        n => KeepValues::First(u32::try_from(n).unwrap()),
    }
}

#[test]
fn every_record_vector_is_reproduced_byte_for_byte() {
    let doc = test_vectors::load("records.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 30, "too few record vectors");
    let mut checked = 0;
    for case in cases {
        let (name, input, expected) = (case["name"].as_str().unwrap(), &case["input"], &case["expected"]);
        if input.get("checkpoint_hex").is_some() {
            // A name given as invalid UTF-8 bytes: Rust names are `&str`,
            // always valid UTF-8, so this case cannot arise here.
            continue;
        }
        let data = hex(input["data_hex"].as_str().unwrap());
        let dtype = DType::from_name(input["dtype"].as_str().unwrap()).unwrap();
        let shape: Vec<usize> =
            input["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        let tensor = Tensor::from_bytes(dtype, &shape, &data).unwrap();
        let key = record_key_from_vector(input);
        let digest = Digest::of(&tensor);
        let given_meta = meta_entries(&input["meta"]);
        let meta = canonical_meta(&given_meta);
        let seq = input["seq"].as_i64().unwrap();
        let view = record_view(&key, seq, &tensor, keep(&input["values"]), &digest, &meta);

        assert_eq!(view.blake3, expected["blake3"].as_str().unwrap(), "{name}: blake3");
        let mut line = Vec::new();
        record_line(&mut line, &view);
        let expected_line = format!("{}\n", expected["jsonl"].as_str().unwrap());
        assert_eq!(String::from_utf8(line).unwrap(), expected_line, "{name}: JSONL line");
        let mut head = Vec::new();
        let frame = record_frame(&mut head, &view);
        let whole = [frame.head, frame.data, frame.rest].concat();
        assert_eq!(whole, hex(expected["frame_hex"].as_str().unwrap()), "{name}: frame");
        assert_eq!(frame.data, &data[..], "{name}: the tensor bytes are the frame's own, not a copy");
        checked += 1;
    }
    assert_eq!(checked, cases.len() - 1, "only the byte-string name case is skipped");
}

#[test]
fn every_header_vector_is_reproduced_byte_for_byte() {
    let doc = test_vectors::load("headers.json");
    for case in doc["cases"].as_array().unwrap() {
        let (name, input, expected) = (case["name"].as_str().unwrap(), &case["input"], &case["expected"]);
        let given_config = meta_entries(&input["config"]);
        let config = canonical_meta(&given_config);
        let header = header_view_from_vector(input, &config);
        let mut line = Vec::new();
        header_line(&mut line, &header);
        assert_eq!(String::from_utf8(line).unwrap(), format!("{}\n", expected["jsonl"].as_str().unwrap()), "{name}");
        let mut frame = Vec::new();
        header_frame(&mut frame, &header);
        assert_eq!(frame, hex(expected["frame_hex"].as_str().unwrap()), "{name}: frame");
    }
}
