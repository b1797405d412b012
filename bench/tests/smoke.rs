//! Runs the built `ur_bench --quick` on the native CPU adapter (through the
//! loader beside it, as `scripts/build.sh` lays them out) and checks its
//! report: a row for every scenario in the table and in the JSON, valid JSON
//! (read back by Python's parser, independent of the serde writer), and no
//! figure without a status that says it was measured. Figures are not
//! judged: no timed assertions.

use std::path::Path;
use std::process::Command;

#[test]
fn quick_run_reports_every_scenario_as_valid_json() {
    let exe = Path::new(env!("CARGO_BIN_EXE_ur_bench"));
    let loader = exe.with_file_name("libur_loader.so.0");
    assert!(loader.exists(), "{} is missing: run scripts/build.sh first", loader.display());
    let dir = std::env::temp_dir().join(format!("ur_bench_smoke_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json_path = dir.join("bench.json");
    let svg_path = dir.join("bench.svg");

    let output = Command::new(exe)
        .args(["--quick", "--device-filter", "native_cpu", "--json"])
        .arg(&json_path)
        .arg("--plot")
        .arg(&svg_path)
        .output()
        .expect("ur_bench runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "ur_bench failed: {}\n{stdout}\n{stderr}", output.status);

    // The table: a row per scenario, in the "#" column.
    let header = stdout.lines().position(|l| l.starts_with("device ")).expect("a table header");
    let rows: Vec<&str> = stdout.lines().skip(header + 2).filter(|l| !l.starts_with(' ') && !l.is_empty()).collect();
    // Scenario 8 needs a second device on the platform, which this run has not.
    for scenario in [1, 2, 3, 4, 5, 6, 7, 9] {
        let found = rows.iter().any(|l| l.split_whitespace().nth(1) == Some(&scenario.to_string()));
        assert!(found, "no table row for scenario {scenario}:\n{stdout}");
    }
    assert!(rows.iter().any(|l| l.starts_with("native_cpu:0 ")), "rows for the native CPU device:\n{stdout}");

    // Ratios of costs read "N.NNx faster" with N.NN >= 1, or "N.NNx slower";
    // never "0.69x faster".
    let words: Vec<&str> = stdout.split_whitespace().collect();
    for pair in words.windows(2) {
        let factor = pair[0].strip_suffix('x').and_then(|n| n.parse::<f64>().ok());
        if let (Some(factor), "faster" | "slower") = (factor, pair[1]) {
            assert!(factor >= 1.0, "a ratio reads \"{} {}\":\n{stdout}", pair[0], pair[1]);
        }
    }
    // Paths in messages are normalised.
    assert!(!stdout.contains("/../") && !stderr.contains("/../"), "an unnormalised path:\n{stdout}\n{stderr}");

    // The JSON: valid by an independent parser, with the same scenarios.
    let check = Command::new("python3")
        .arg("-c")
        .arg(concat!(
            "import json, sys\n",
            "d = json.load(open(sys.argv[1]))\n",
            "scenarios = sorted({r['scenario'] for r in d['rows']})\n",
            "assert scenarios == [1, 2, 3, 4, 5, 6, 7, 9], scenarios\n",
            "for r in d['rows']:\n",
            "    for side in ('ours', 'baseline'):\n",
            "        o = r[side]\n",
            "        assert (o['status'] == 'ok') == (o['value'] is not None), (r['name'], side, o)\n",
            "        assert o['status'] == 'ok' or o['reason'], (r['name'], side, o)\n",
            "    assert r['met'] is None or r['goal'] is not None, r\n",
            "assert d['sweeps'], 'a chart was asked for, so there are sweep series'\n",
            "print(len(d['rows']), 'rows')\n",
        ))
        .arg(&json_path)
        .output()
        .expect("python3 runs (scripts/test.sh needs it too)");
    assert!(
        check.status.success(),
        "the JSON does not hold up: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );

    let svg = std::fs::read_to_string(&svg_path).expect("the chart was written");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "an SVG document");
    assert!(svg.contains("native_cpu:0"), "a panel for the device");
    let _ = std::fs::remove_dir_all(&dir);
}
