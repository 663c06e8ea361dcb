#![no_main]
//! `Host::process` with arbitrary tool names, statuses, levels and payloads: no panic; an
//! output that differs from the input is either lossless (the codec's inverse gives the input
//! back) or carries a pointer whose key recovers the exact input; the same call decides the
//! same way twice.

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use parrot_host::{Call, Host, Input, Level, MemoryTeeStore, TokenCounter};

struct NoTokens;

impl TokenCounter for NoTokens {
    fn name(&self) -> &str {
        "none"
    }

    fn count(&self, _: &str) -> usize {
        0
    }
}

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("parrot-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".parrot")).expect("project");
        std::fs::write(
            dir.join(".parrot/compressors.toml"),
            "[compressor.\"rows*\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n\
             [compressor.\"rows_2\"]\ncodec = \"columnar\"\nparams = { min_rows = 2 }\n",
        )
        .expect("manifest");
        Host::builder()
            .project(&dir)
            .plugin_path(None)
            .tee_store(Arc::new(MemoryTeeStore::new(64)))
            .tokenizer(Arc::new(NoTokens))
            .max_result_chars(300)
            .kill_switch(Some(false))
            .build()
            .expect("host")
    })
}

const TOOLS: [&str; 5] = ["rows", "rows_2", "any", "dq_execute_database_query", ""];
const STATUSES: [&str; 3] = ["success", "error", "Success"];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, payload)) = data.split_first() else {
        return;
    };
    let host = host();
    let tool = TOOLS[usize::from(choice) % TOOLS.len()];
    let status = STATUSES[usize::from(choice / 8) % STATUSES.len()];
    let mut call = Call::new(tool, Input::Bytes(payload)).status(status);
    if choice & 0x80 != 0 {
        call = call.level(Level::ALL[usize::from(choice / 32) % 4]);
    }
    let out = host.process(call);
    let again = host.process(call);
    assert_eq!(
        out.meta.compressed, again.meta.compressed,
        "not deterministic"
    );
    assert_eq!(out.meta.skipped, again.meta.skipped, "not deterministic");
    if !out.meta.compressed {
        assert_eq!(&*out.payload, payload, "a skipped call changed the payload");
        return;
    }
    assert!(
        out.payload.len() < payload.len() || out.meta.teed,
        "grew without a pointer"
    );
    if out.meta.teed {
        let key = out.meta.tee_key.as_deref().expect("a teed call has a key");
        let stored = host.recover(key).expect("store").expect("the key recovers");
        assert_eq!(stored, payload, "the stored original is not the input");
    } else {
        // The codec that made the output: the entry's, or the one the router `auto` (the core
        // manifest's `"*"`) chose, which the metadata names.
        let name = out.meta.codec.as_deref().expect("a compressed call names its codec");
        let codec = host
            .registry()
            .instantiate(name, serde_json::Map::new())
            .expect("the codec that ran is registered");
        let text = out.text().expect("UTF-8 output");
        let expanded = codec.expand(text).expect("a lossless outcome expands");
        let input = std::str::from_utf8(payload).expect("UTF-8 input");
        assert!(
            codec
                .meta()
                .gives_back(parrot_codec_api::PayloadKind::Json, input, &expanded),
            "a lossless outcome does not expand back"
        );
    }
});
