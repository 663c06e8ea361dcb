//! The async entry point keeps an async caller's runtime responsive: an async caller's
//! runtime never stalls while 10 MB are compressed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parrot_host::{Host, MemoryTeeStore, OwnedCall, OwnedInput, Skip};

/// A query result of about 10 MB: `{"driver": "pg", "rows": [...]}`.
fn rows_10mb() -> String {
    let mut rows = Vec::new();
    let mut size = 0;
    let mut i = 0u64;
    while size < 10 * 1024 * 1024 {
        let row = format!(
            "{{\"id\":{i},\"store\":\"S{:04}\",\"revenue\":{}.{:02},\"region\":\"south\",\"note\":null}}",
            i % 5000,
            1000 + i % 977,
            i % 100
        );
        size += row.len() + 1;
        rows.push(row);
        i += 1;
    }
    format!("{{\"driver\":\"pg\",\"rows\":[{}]}}", rows.join(","))
}

/// What one async call of 10 MB looked like from the runtime: the ticker's worst gap, its
/// number of ticks, and how long the call took.
struct Observed {
    worst_gap: Duration,
    ticks: usize,
    call: Duration,
}

/// Compresses a 10 MB payload through the async entry point on a current-thread runtime
/// while a 1 ms ticker runs on it.
fn observe(host: &Arc<Host>, payload: &str) -> Observed {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (gaps, processed, call) = runtime.block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let ticking = Arc::clone(&stop);
        let ticker = tokio::spawn(async move {
            let mut gaps = Vec::new();
            let mut last = Instant::now();
            while !ticking.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let now = Instant::now();
                gaps.push(now - last);
                last = now;
            }
            gaps
        });
        // Let the ticker start before the call.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let call = OwnedCall::new(
            "dq_execute_database_query",
            OwnedInput::Text(payload.to_owned()),
        );
        let started = Instant::now();
        let processed = host.process_async(call).await;
        let call = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        (ticker.await.unwrap(), processed, call)
    });
    assert_ne!(processed.meta.skipped, Some(Skip::BudgetPassthrough));
    assert!(processed.meta.compressed, "{:?}", processed.meta);
    Observed {
        worst_gap: gaps.iter().copied().max().unwrap_or_default(),
        ticks: gaps.len(),
        call,
    }
}

#[test]
fn a_1ms_ticker_keeps_ticking_while_10mb_are_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let host = Arc::new(
        Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .tee_store(Arc::new(MemoryTeeStore::default()))
            .build()
            .unwrap(),
    );
    let payload = rows_10mb();
    let seen = observe(&host, &payload);
    // Compression on the runtime's thread would stop the ticker for the whole call: one gap
    // as long as the call. Off that thread, the gaps are the scheduler's: a few milliseconds,
    // tens under load, against a call of hundreds of milliseconds (over a second in a debug
    // build). Both are measured in the same run, under the same load, so the bound of half the
    // call holds however loaded the machine is, and still fails if the work ran in place.
    assert!(
        seen.worst_gap < seen.call / 2,
        "the runtime stalled: a gap of {:?} during a call of {:?} ({} ticks)",
        seen.worst_gap,
        seen.call,
        seen.ticks
    );
    assert!(
        seen.ticks > 10,
        "the ticker ran during the call: {} ticks",
        seen.ticks
    );
}
