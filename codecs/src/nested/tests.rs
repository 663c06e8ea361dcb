use super::*;

fn codec(params: &str) -> JsonNested {
    parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
}

/// The output for `input` (unchanged: `None`), after checking that it expands back.
fn nested(params: &str, input: &str) -> Option<String> {
    let codec = codec(params);
    match Codec::compress(&codec, Payload::json(input), Level::Minimal).unwrap() {
        Outcome::Changed { payload, lossy } => {
            assert!(!lossy);
            let expanded = codec.expand(&payload).unwrap();
            assert!(
                parrot_json::equivalent(input, &expanded, true),
                "{input}\n{payload}\n{expanded}"
            );
            Some(payload)
        }
        Outcome::Unchanged => None,
    }
}

#[test]
fn an_array_of_objects_is_a_table_with_constants_and_missing_cells() {
    let input = r#"[{"id": 1, "state": "open", "title": "a", "draft": false},
                    {"id": 2, "state": "open", "draft": false},
                    {"state": "open", "id": 3, "title": null, "draft": false, "extra": [1]}]"#;
    assert_eq!(
        nested("{}", input).unwrap(),
        r#"{"_columns":["id","title","extra"],"_constant":{"state":"open","draft":false},"_rows":[[1,"a",null],[2,null,null],[3,null,[1]]]}"#
    );
}

#[test]
fn tables_nest_inside_cells_and_objects() {
    let labels = r#"[{"name": "bug", "color": "f00"}, {"name": "docs", "color": "0f0"},
                     {"name": "ci", "color": "00f"}]"#;
    let input = format!(
        r#"{{"total": 3, "items": [{{"number": 1, "labels": {labels}}}, {{"number": 2, "labels": []}},
                                  {{"number": 3}}]}}"#
    );
    // Three items with one or two short names do not pay for a table; their labels do.
    assert_eq!(
        nested(r#"{"refs": false}"#, &input).unwrap(),
        r#"{"total":3,"items":[{"number":1,"labels":{"_columns":["name","color"],"_rows":[["bug","f00"],["docs","0f0"],["ci","00f"]]}},{"number":2,"labels":[]},{"number":3}]}"#
    );
}

#[test]
fn a_table_s_cells_hold_tables() {
    let steps = |job: usize| {
        (0..3)
            .map(|n| {
                format!(r#"{{"name": "step {job}.{n}", "status": "completed", "number": {n}}}"#)
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let jobs: Vec<String> = (0..3)
        .map(|job| {
            format!(
                r#"{{"id": {job}, "conclusion": "success", "steps": [{}]}}"#,
                steps(job)
            )
        })
        .collect();
    let input = format!(r#"{{"jobs": [{}]}}"#, jobs.join(","));
    assert_eq!(
        nested("{}", &input).unwrap(),
        r#"{"jobs":{"_columns":["id","steps"],"_constant":{"conclusion":"success"},"_rows":[[0,{"_columns":["name","number"],"_constant":{"status":"completed"},"_rows":[["step 0.0",0],["step 0.1",1],["step 0.2",2]]}],[1,{"_columns":["name","number"],"_constant":{"status":"completed"},"_rows":[["step 1.0",0],["step 1.1",1],["step 1.2",2]]}],[2,{"_columns":["name","number"],"_constant":{"status":"completed"},"_rows":[["step 2.0",0],["step 2.1",1],["step 2.2",2]]}]]}}"#
    );
}

#[test]
fn a_repeated_subtree_is_said_once_and_referred_to_by_its_first_path() {
    let user =
        r#"{"login": "octocat", "id": 583231, "url": "https://api.github.com/users/octocat"}"#;
    // Names with `/` and `~` are escaped in the pointer; the second copy sits in a table
    // row, the third under another name.
    let input = format!(
        r#"{{"a/b~c": {{"user": {user}}}, "items": [{{"n": 1, "by": {user}}}, {{"n": 2, "by": {{"login": "x"}}}}], "sender": {user}}}"#
    );
    let out = nested(r#"{"min_rows": 2}"#, &input).unwrap();
    assert_eq!(
        out,
        r##"{"a/b~c":{"user":{"login":"octocat","id":583231,"url":"https://api.github.com/users/octocat"}},"items":[{"n":1,"by":{"$ref":"#/a~1b~0c/user"}},{"n":2,"by":{"login":"x"}}],"sender":{"$ref":"#/a~1b~0c/user"}}"##
    );
}

#[test]
fn a_reference_may_name_a_cell_of_a_table_and_stand_for_a_whole_row() {
    let repo =
        r#"{"id": 1296269, "full_name": "octocat/Hello-World", "private": false, "fork": false}"#;
    let input = format!(
        r#"{{"runs": [{{"id": 1, "repository": {repo}}}, {{"id": 2, "repository": {repo}}}, {{"id": 1, "repository": {repo}}}],
            "head": {{"repo": {repo}}}}}"#
    );
    let out = nested("{}", &input).unwrap();
    // The constant column holds the repository once; the third run repeats the first
    // whole and is a reference; `head.repo` names the first run's cell.
    assert!(
        out.contains(r##""_rows":[[1],[2],{"$ref":"#/runs/0"}]"##),
        "{out}"
    );
    assert!(
        out.ends_with(r##""head":{"repo":{"$ref":"#/runs/0/repository"}}}"##),
        "{out}"
    );
}

#[test]
fn an_object_of_records_is_a_keyed_table_and_a_long_string_repeated_is_referred_to() {
    let readme =
        "# left-pad\\n\\nPads a string on the left, with any character you give it, to any length.";
    let version = |v: &str, dep: &str| {
        format!(
            r#"{{"name": "left-pad", "version": "{v}", "readme": "{readme}", "dependencies": {{"{dep}": "^1.0.0"}}}}"#
        )
    };
    let input = format!(
        r#"{{"versions": {{"1.0.0": {}, "1.0.1": {}, "1.1.0": {}}}, "readme": "{readme}"}}"#,
        version("1.0.0", "a"),
        version("1.0.1", "b"),
        version("1.1.0", "c")
    );
    let out = nested("{}", &input).unwrap();
    assert_eq!(
        out,
        format!(
            r##"{{"versions":{{"_keys":["1.0.0","1.0.1","1.1.0"],"_columns":["version","dependencies"],"_constant":{{"name":"left-pad","readme":"{readme}"}},"_rows":[["1.0.0",{{"a":"^1.0.0"}}],["1.0.1",{{"b":"^1.0.0"}}],["1.1.0",{{"c":"^1.0.0"}}]]}},"readme":{{"$ref":"#/versions/1.0.0/readme"}}}}"##
        )
    );
}

#[test]
fn a_reference_is_written_only_where_it_is_shorter() {
    let small = r#"{"a": 1, "b": 2}"#;
    let input = format!(r#"{{"x": {small}, "y": {small}, "z": [{small}]}}"#);
    // Not shorter: no reference, and nothing else only this codec writes, so it is left
    // to the others.
    assert_eq!(nested(r#"{"min_ref_bytes": 1}"#, &input), None);
}

#[test]
fn flat_rows_with_nothing_repeated_are_left_to_the_other_codecs() {
    let rows: Vec<String> = (0..20)
        .map(|i| format!(r#"{{"id": {i}, "region": "south", "score": {}.5}}"#, i % 7))
        .collect();
    let rows = format!("[{}]", rows.join(","));
    assert_eq!(nested("{}", &rows), None);
    assert_eq!(
        nested("{}", &format!(r#"{{"driver": "pg", "rows": {rows}}}"#)),
        None
    );
    // One level deeper, the same rows are a table only this codec writes.
    let deeper = format!(r#"{{"result": {{"rows": {rows}}}}}"#);
    assert!(nested("{}", &deeper).unwrap().starts_with(
        r#"{"result":{"rows":{"_columns":["id","score"],"_constant":{"region":"south"}"#
    ));
}

#[test]
fn a_document_holding_a_reserved_name_is_left_unchanged() {
    for name in RESERVED {
        let input = format!(
            r#"{{"items": [{{"a": 1, "b": 2}}, {{"a": 3, "b": 4}}, {{"a": 5, "b": 6}}], "deep": [{{"{name}": 1}}]}}"#
        );
        assert_eq!(nested("{}", &input), None, "{name}");
    }
}

#[test]
fn text_and_invalid_json_are_left_unchanged() {
    let codec = codec("{}");
    for (payload, kind) in [
        (
            "[{\"a\": 1}, {\"a\": 2}]",
            parrot_codec_api::PayloadKind::Text,
        ),
        ("{\"a\": 1, \"a\": 2}", parrot_codec_api::PayloadKind::Json),
        ("[1, 2", parrot_codec_api::PayloadKind::Json),
    ] {
        assert_eq!(
            Codec::compress(&codec, Payload::new(payload, kind), Level::Normal).unwrap(),
            Outcome::Unchanged,
            "{payload}"
        );
    }
}

#[test]
fn expand_refuses_what_it_did_not_write_naming_the_problem() {
    let codec = codec("{}");
    let cases = [
        (
            r#"{"_columns":["a"],"_rows":[[1,2]]}"#,
            "row 0 of a table is not an array of 1 cells",
        ),
        (
            r#"{"_columns":["a"],"_rows":[[1]],"x":1}"#,
            "a table has a member \"x\"",
        ),
        (r#"{"_columns":["a"]}"#, "a table without _columns or _rows"),
        (
            r#"{"_keys":["x"],"_columns":["a"],"_rows":[[1],[2]]}"#,
            "a table has 1 _keys for 2 rows",
        ),
        (
            r#"{"_columns":["a"],"_constant":{"a":1},"_rows":[]}"#,
            "is one of its _columns too",
        ),
        (
            r##"{"a":{"$ref":"#/b"}}"##,
            "a reference to #/b names no value",
        ),
        (
            r##"{"a":{"$ref":"#/b"},"b":{"$ref":"#/a"}}"##,
            "not an earlier value",
        ),
        (r##"{"a":{"$ref":"x"}}"##, "not a JSON Pointer fragment"),
        (
            r##"{"a":{"$ref":"#/b","c":1},"b":1}"##,
            "a $ref member in an object that is not a reference",
        ),
    ];
    for (payload, expected) in cases {
        let err = codec.expand(payload).unwrap_err();
        assert!(
            err.message().contains(expected),
            "{payload}: {}",
            err.message()
        );
        assert!(
            err.message().starts_with("json_nested cannot expand: "),
            "{}",
            err.message()
        );
    }
}

#[test]
fn expand_stops_a_document_that_references_would_blow_up() {
    // Each level refers twice to the one before: 2^40 copies.
    let mut text = String::from(r#"{"l0":[1,2,3,4,5,6,7,8]"#);
    for level in 1..=40 {
        let before = level - 1;
        text.push_str(&format!(
            r##","l{level}":[{{"$ref":"#/l{before}"}},{{"$ref":"#/l{before}"}}]"##
        ));
    }
    text.push('}');
    let err = codec("{}").expand(&text).unwrap_err();
    assert!(err.message().contains("would exceed"), "{}", err.message());
}

#[test]
fn a_member_name_too_long_to_place_is_kept_aside_and_written_exactly() {
    // Names of 65,535 bytes and more do not fit a node's length field.
    let long = "n".repeat(70_000);
    let row = |id: usize| format!(r#"{{"{long}":{{"id":{id},"tags":["a","b"]}},"x":{id}}}"#);
    let input = format!("{{\"items\":[{},{},{}]}}", row(1), row(2), row(3));
    let out = nested("{}", &input).expect("a table of nested cells");
    assert!(
        out.contains(&format!(r#""_columns":["{long}","x"]"#)),
        "{}",
        &out[..200]
    );
}

#[test]
fn flat_rows_with_nothing_repeated_are_known_without_the_tape() {
    let row = |i: usize| {
        format!(
            r#"{{"id": {i}, "name": "user-{i:05}", "email": "user{i}@example.com", "city": "Springfield", "note": null}}"#
        )
    };
    let rows: Vec<String> = (0..50).map(row).collect();
    let flat = format!("[{}]", rows.join(", "));
    assert!(flat::unrepeated_flat_rows(&flat, 64));
    assert_eq!(nested("{}", &flat), None);
    // A row repeated (nulls aside, as the output counts it): the whole reading refers to it.
    let again = format!(
        "[{}, {}]",
        rows.join(", "),
        row(7).replace(r#", "note": null"#, "")
    );
    assert!(!flat::unrepeated_flat_rows(&again, 64));
    assert!(
        nested("{}", &again)
            .unwrap()
            .contains(r##"{"$ref":"#/7"}"##)
    );
    // A long string repeated in two of three rows (in all of them it would be a constant).
    let text = "a sentence long enough to be referred to, repeated in two of the rows";
    let long = format!(
        r#"[{{"a": 1, "t": "{text}"}}, {{"a": 2, "t": "{text}"}}, {{"a": 3, "t": "other"}}]"#
    );
    assert!(!flat::unrepeated_flat_rows(&long, 64));
    assert!(
        nested("{}", &long)
            .unwrap()
            .contains(r##"{"$ref":"#/0/t"}"##)
    );
    // Without references, repeats do not matter; a nested value always does.
    assert!(flat::unrepeated_flat_rows(&again, usize::MAX));
    assert!(!flat::unrepeated_flat_rows(r#"[{"a": {"b": 1}}]"#, 64));
    assert!(!flat::unrepeated_flat_rows(r#"{"rows": [{"a": 1}]}"#, 64));
    assert!(flat::unrepeated_flat_rows("[1, 2, 3]", 64));
}
