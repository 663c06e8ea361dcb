//! The contract's check of a codec's cut agrees with the host: a cut the contract passes is
//! one the host's last rule (CONTRACT §4, rule 11) takes, and a cut the host refuses is one the
//! contract fails. Each case is a codec whose cut misbehaves the same way at every room, run
//! through a real host with a `max_result_chars` its output is over, and through the contract.

use std::sync::Arc;

use parrot_codec_api::{
    Codec, CodecError, Cut, CutAt, Level, Outcome, Params, Payload, build, json_string_chars,
};
use parrot_codec_test::{Contract, CutRule, Rule};
use parrot_host::{Call, Host, Input, MemoryTeeStore};

/// The cuts a [`Cutter`] can give, by its `cut` param.
const CUTS: [&str; 9] = [
    "good",
    "marker_alone",
    "inside_line",
    "everything",
    "over_room",
    "empty_marker",
    "two_line_marker",
    "no_recovery",
    "panics",
];

/// A marker that keeps the rules, and that no marker of the host's holds.
const MARKER: &str = "[\u{2026} codec's cut: lines not shown; wm_get_result {}]";

/// Drops every other line of a text at `normal` and up (lossy), and cuts its output as its `cut`
/// param says (one of [`CUTS`]).
struct Cutter {
    cut: &'static str,
}

impl Codec for Cutter {
    const NAME: &'static str = "cutter";
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        Ok(Cutter {
            cut: params.choice("cut", &CUTS, "good")?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        let text = payload.text();
        let out: String = text.split_inclusive('\n').step_by(2).collect();
        Ok(
            if level.allows_loss() && !payload.is_json() && out.len() < text.len() {
                Outcome::lossy(out)
            } else {
                Outcome::Unchanged
            },
        )
    }
}

impl Cutter {
    fn cut(&self, _: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        let good = good(output, room);
        Some(match self.cut {
            "good" => good,
            "marker_alone" => CutAt::new(0, MARKER),
            "inside_line" => CutAt::new(good.kept + 3, MARKER),
            "everything" => CutAt::new(output.len(), MARKER),
            "over_room" => CutAt::new(output.trim_end().rfind('\n')? + 1, MARKER),
            "empty_marker" => CutAt::new(good.kept, ""),
            "two_line_marker" => CutAt::new(good.kept, "[\u{2026} codec's cut]\nwm_get_result {}"),
            "no_recovery" => CutAt::new(good.kept, "[\u{2026} codec's cut: lines not shown]"),
            _ => panic!("the cut exploded"),
        })
    }
}

/// The most whole lines of `output` that fit `room` with [`MARKER`], at least one removed.
fn good(output: &str, room: usize) -> CutAt {
    let budget = room.saturating_sub(json_string_chars(MARKER));
    let (mut kept, mut spent) = (0, 0);
    for line in output.split_inclusive('\n') {
        let cost = json_string_chars(line);
        if spent + cost > budget || kept + line.len() >= output.len() {
            break;
        }
        (kept, spent) = (kept + line.len(), spent + cost);
    }
    CutAt::new(kept, MARKER)
}

/// Whether a host with `max_result_chars = max` takes the cut of a [`Cutter`] with `cut`: its
/// result, cut, does not end with the host's own marker.
fn host_takes(cut: &str, input: &str, max: usize) -> bool {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".parrot")).unwrap();
    std::fs::write(
        project.path().join(".parrot/compressors.toml"),
        format!(
            "[compressor.\"t\"]\ncodec = \"cutter\"\nlevel = \"normal\"\nparams = {{ cut = \"{cut}\" }}\n"
        ),
    )
    .unwrap();
    let host = Host::builder()
        .project(project.path())
        .plugin_path(None)
        .trust_project_plugins(false)
        .codec::<Cutter>()
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .inline_at_any_size(true)
        .max_result_chars(max)
        .build()
        .unwrap_or_else(|err| panic!("{err}"));
    let out = host.process(Call::new("t", Input::Text(input)));
    assert!(out.meta.teed, "{cut}: {:?}", out.meta);
    let text = out.text().unwrap();
    assert!(text.chars().count() <= max, "{cut}: {text}");
    // Cut: the last line is the pointer, the one before it a marker.
    let marker = text.lines().rev().nth(1).unwrap_or_default();
    assert!(marker.starts_with("[\u{2026} "), "{cut}: {text}");
    !marker.contains("cut at max_result_chars")
}

/// Whether a rule of a cut is the one a case expects.
type IsRule = fn(&CutRule) -> bool;

#[test]
fn a_cut_the_contract_passes_is_one_the_host_takes() {
    let input: String = (0..60)
        .map(|i| format!("line {i:02} of the output\n"))
        .collect();
    // Each row: the cut, whether the host takes it, the rule of a cut the contract finds
    // broken (none: it passes).
    let cases: [(&str, bool, Option<IsRule>); 9] = [
        ("good", true, None),
        ("marker_alone", true, None),
        (
            "inside_line",
            false,
            Some(|rule| matches!(rule, CutRule::NotWholeLines { .. })),
        ),
        (
            "everything",
            false,
            Some(|rule| matches!(rule, CutRule::KeepsAll { .. })),
        ),
        (
            "over_room",
            false,
            Some(|rule| matches!(rule, CutRule::OverRoom { .. })),
        ),
        (
            "empty_marker",
            false,
            Some(|rule| matches!(rule, CutRule::EmptyMarker)),
        ),
        (
            "two_line_marker",
            false,
            Some(|rule| matches!(rule, CutRule::MarkerLines { .. })),
        ),
        // The contract is stricter than the host here: a marker says how to get the part
        // removed back.
        (
            "no_recovery",
            true,
            Some(|rule| matches!(rule, CutRule::NoRecovery { .. })),
        ),
        (
            "panics",
            false,
            Some(|rule| matches!(rule, CutRule::Panicked { .. })),
        ),
    ];
    for (cut, taken, broken) in cases {
        let params = Params::from_json(&format!(r#"{{"cut": "{cut}"}}"#)).unwrap();
        let codec: Cutter = build(params).unwrap();
        let found = Contract::new(&codec).check(&input).map_err(|v| v.rule);
        match (broken, &found) {
            (None, Ok(())) => {}
            (Some(expected), Err(Rule::Cut { broken, .. })) if expected(broken) => {}
            _ => panic!("{cut}: the contract found {found:?}"),
        }
        for max in [300, 450, 600] {
            assert_eq!(host_takes(cut, &input, max), taken, "{cut} at {max}");
            assert!(
                found.is_err() || taken,
                "{cut}: passed, but the host refuses it"
            );
        }
    }
}
