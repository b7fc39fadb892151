//! Bad AICB workload files: every error names the file, the line and the header key or row
//! column, and says what was expected.

use super::workload::{WorkloadError, parse, read};

const HEADER: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 \
                      vpp: 2 ga: 1 all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0";
const ROW: &str = "attn\t-1\t1000\tALLREDUCE\t4096\t900\tALLREDUCE\t4096\t800\tNONE\t0\t100";

/// The error for `text` (in file `bad.txt`), checked to name `line` and `field`, with a message
/// holding `expected`.
fn refused(text: &str, line: Option<usize>, field: &str, expected: &str) -> WorkloadError {
    let error = parse(text, "bad.txt").unwrap_err();
    assert_eq!(error.file, "bad.txt", "{error}");
    assert_eq!(error.line, line, "{error}");
    assert_eq!(error.field, field, "{error}");
    assert!(error.message.contains(expected), "{error}");
    error
}

/// A file of the header and these rows, with a correct count.
fn file_with_rows(rows: &[&str]) -> String {
    format!("{HEADER}\n{}\n{}\n", rows.len(), rows.join("\n"))
}

/// A file of this header line and one good row.
fn file_with_header(header: &str) -> String {
    format!("{header}\n1\n{ROW}\n")
}

#[test]
fn a_good_file_parses() {
    let workload = parse(&file_with_rows(&[ROW, ROW]), "good.txt").unwrap();
    assert_eq!(workload.rows.len(), 2);
    assert_eq!(workload.rows[1].line, 4);
}

#[test]
fn the_error_reads_file_line_field_message() {
    let error = refused(
        &file_with_rows(&[ROW, "mlp -1 1 NONE 0 1 NONE 0 1 ALLREDUCE_TP 8 100"]),
        Some(4),
        "wg_type (column 10)",
        "",
    );
    assert_eq!(
        error.to_string(),
        "bad.txt:4: wg_type (column 10): unknown collective type \"ALLREDUCE_TP\": expected \
         NONE, BROADCAST, or ALLREDUCE, ALLGATHER, REDUCESCATTER or ALLTOALL, bare (over DP in \
         this column) or with the suffix _EP or _DP_EP"
    );
}

#[test]
fn unknown_collective_types() {
    for (row, field) in [
        (
            "a -1 1 BROADCAST_EP 8 1 NONE 0 1 NONE 0 1",
            "fwd_type (column 4)",
        ),
        (
            "a -1 1 NONE 0 1 ALLREDUCEALLTOALL 8 1 NONE 0 1",
            "ig_type (column 7)",
        ),
        (
            "a -1 1 NONE 0 1 allreduce 8 1 NONE 0 1",
            "ig_type (column 7)",
        ),
        ("a -1 1 NONE 0 1 NONE 0 1 None 0 1", "wg_type (column 10)"),
    ] {
        let error = refused(
            &file_with_rows(&[row]),
            Some(3),
            field,
            "unknown collective type",
        );
        let bare_is_tp = !field.starts_with("wg");
        assert_eq!(
            error.message.contains("(over TP in this column)"),
            bare_is_tp
        );
    }
}

#[test]
fn non_numeric_fields() {
    for (row, field, unit) in [
        (
            "a -1 1k NONE 0 1 NONE 0 1 NONE 0 1",
            "fwd_compute (column 3)",
            "ns",
        ),
        (
            "a -1 1 ALLGATHER 4.5 1 NONE 0 1 NONE 0 1",
            "fwd_size (column 5)",
            "bytes",
        ),
        (
            "a -1 1 NONE 0 -7 NONE 0 1 NONE 0 1",
            "ig_compute (column 6)",
            "ns",
        ),
        (
            "a -1 1 NONE 0 1 NONE x 1 NONE 0 1",
            "ig_size (column 8)",
            "bytes",
        ),
        (
            "a -1 1 NONE 0 1 NONE 0 1e3 NONE 0 1",
            "wg_compute (column 9)",
            "ns",
        ),
        (
            "a -1 1 NONE 0 1 NONE 0 1 NONE 0 100.0",
            "update_time (column 12)",
            "ns",
        ),
    ] {
        refused(
            &file_with_rows(&[ROW, row]),
            Some(4),
            field,
            &format!("expected a non-negative integer ({unit})"),
        );
    }
}

#[test]
fn missing_and_extra_columns() {
    refused(
        &file_with_rows(&["a -1 1 NONE 0 1 NONE 0 1 NONE 0"]),
        Some(3),
        "update_time (column 12)",
        "found 11: update_time missing",
    );
    refused(
        &file_with_rows(&["a -1 1 NONE 0 1 NONE"]),
        Some(3),
        "ig_size (column 8)",
        "found 7: ig_size, wg_compute, wg_type, wg_size, update_time missing",
    );
    refused(
        &file_with_rows(&["a -1 1 NONE 0 1 NONE 0 1 NONE 0 1 HYBRID_TRANSFORMER"]),
        Some(3),
        "column 13",
        "found 13",
    );
    refused(
        &file_with_rows(&["a 0 1 NONE 0 1 NONE 0 1 NONE 0 1"]),
        Some(3),
        "reserved (column 2)",
        "expected -1",
    );
}

#[test]
fn row_counts() {
    refused(
        &format!("{HEADER}\n1\n{ROW}\n\n{ROW}\n"),
        Some(2),
        "row count",
        "line 2 declares 1 rows but the file has 2 (on lines 3-5)",
    );
    refused(
        &format!("{HEADER}\n3\n"),
        Some(2),
        "row count",
        "line 2 declares 3 rows but the file has none",
    );
    refused(
        &format!("{HEADER}\n2 rows\n{ROW}\n"),
        Some(2),
        "row count",
        "expected the number of rows (a non-negative integer), got \"2 rows\"",
    );
    refused(HEADER, Some(2), "row count", "missing");
    // Blank lines anywhere after line 2 are skipped, and line numbers still count them.
    let spaced = parse(&format!("{HEADER}\n2\n\n{ROW}\n  \n{ROW}\n\n"), "f").unwrap();
    let lines: Vec<usize> = spaced.rows.iter().map(|r| r.line).collect();
    assert_eq!(lines, [4, 6]);
}

#[test]
fn policies() {
    refused("", Some(1), "policy", "line 1 is empty");
    refused(
        &file_with_header("HYBRID_DLRM DLRM_LAST_BOTTOM_LAYER: 2"),
        Some(1),
        "policy",
        "SimAI's policy HYBRID_DLRM is not supported by netstep: expected \
         HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER, DATA or MICRO",
    );
    refused(
        &file_with_header("hybrid_transformer"),
        Some(1),
        "policy",
        "unknown policy \"hybrid_transformer\"",
    );
}

#[test]
fn header_keys_and_values() {
    let cases = [
        (
            "DATA tp: 2",
            "header",
            "unknown header key \"tp:\": expected one of",
        ),
        ("MICRO ep:2", "header", "unknown header key \"ep:2\""),
        ("DATA ep: 2 ep: 2", "ep", "\"ep:\" appears twice"),
        (
            "DATA pp:",
            "pp",
            "expected a positive integer after \"pp:\", found the end of line 1",
        ),
        (
            "DATA vpp: 0",
            "vpp",
            "expected a positive integer after \"vpp:\", got \"0\"",
        ),
        ("DATA ga: two", "ga", "got \"two\""),
        ("DATA all_gpus: -8", "all_gpus", "got \"-8\""),
        (
            "DATA pp_comm: 1e6",
            "pp_comm",
            "expected a non-negative number of bytes",
        ),
        (
            "DATA checkpoints: 2 5",
            "checkpoints",
            "expected 2 layer numbers after \"checkpoints:\" 2, got \"\" as number 2",
        ),
        (
            "DATA checkpoint_initiates: x",
            "checkpoint_initiates",
            "expected a count of layers",
        ),
    ];
    for (header, field, expected) in cases {
        refused(&file_with_header(header), Some(1), field, expected);
    }
}

#[test]
fn group_sizes_must_divide_all_gpus() {
    let cases = [
        (
            "model_parallel_NPU_group: 3 all_gpus: 16",
            "model_parallel_NPU_group",
            "TP 3 does not divide all_gpus 16",
        ),
        (
            "model_parallel_NPU_group: 2 pp: 3 all_gpus: 16",
            "pp",
            "TP 2 x PP 3 = 6 does not divide all_gpus 16",
        ),
        (
            "model_parallel_NPU_group: 2 pp: 2 ep: 3 all_gpus: 16",
            "ep",
            "EP 3 does not divide DP = all_gpus 16 / (TP 2 x PP 2) = 4",
        ),
        (
            "ep: 32 all_gpus: 16",
            "ep",
            "EP 32 does not divide DP = all_gpus 16 / (TP 1 x PP 1) = 16",
        ),
    ];
    for (keys, field, expected) in cases {
        let header = format!("HYBRID_TRANSFORMER {keys}");
        refused(&file_with_header(&header), Some(1), field, expected);
    }
}

/// What the header grammar accepts beyond AICB's current writer: `pp_comm` without its colon
/// or as a float (fraction dropped as SimAI's `stoi` does), AICB's micro spelling of `ep`,
/// and checkpoint lists read in full.
#[test]
fn header_forms_accepted() {
    let text = file_with_header(
        "HYBRID_TRANSFORMER expert_parallel_npu_group: 4 pp_comm 5242880.75 checkpoints: 2 3 5 \
         checkpoint_initiates: 1 2 all_gpus: 8",
    );
    let header = parse(&text, "f").unwrap().header;
    assert_eq!(header.ep, 4);
    assert_eq!(header.pp_comm, 5_242_880);
    assert_eq!(header.checkpoints, [3, 5]);
    assert_eq!(header.checkpoint_initiates, [2]);
    assert_eq!(header.all_gpus, Some(8));
    assert_eq!(
        header.defaulted,
        ["model_parallel_NPU_group", "pp", "vpp", "ga"]
    );
}

#[test]
fn an_unreadable_file() {
    let error = read(std::path::Path::new("/nonexistent/w.txt")).unwrap_err();
    assert_eq!(
        (error.file.as_str(), error.line),
        ("/nonexistent/w.txt", None)
    );
    assert!(
        error
            .to_string()
            .starts_with("/nonexistent/w.txt: cannot read the workload file:")
    );
}
