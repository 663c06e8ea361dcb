//! `store`: what the tee store holds and its retention.

use std::time::{Duration, SystemTime};

#[cfg(feature = "redis")]
use parrot_host::TeeStore;

use crate::Failure;
use crate::args::Options;
#[cfg(feature = "redis")]
use crate::printable;
use crate::store::{Persistent, store_only};

pub(crate) fn store(cli: &Options) -> Result<(), Failure> {
    let limit = |limit: Option<String>| limit.unwrap_or_else(|| "none".to_owned());
    let (name, stats, retention) = match store_only(cli)? {
        Persistent::Sqlite(store) => {
            let retention = store.retention();
            (
                store.path().display().to_string(),
                store.stats(),
                format!(
                    "max_entries {}, max_bytes {}, max_age {}",
                    limit(retention.max_entries.map(|n| n.to_string())),
                    limit(retention.max_bytes.map(bytes)),
                    limit(retention.max_age.map(duration)),
                ),
            )
        }
        #[cfg(feature = "redis")]
        Persistent::Redis(store) => {
            let settings = store.settings();
            (
                store.name(),
                store.stats(),
                format!(
                    "ttl {}, max_bytes Redis maxmemory, prefix \"{}\"",
                    limit(settings.ttl.map(duration)),
                    printable(&settings.prefix),
                ),
            )
        }
    };
    let stats = stats.map_err(|err| Failure::runtime(err.to_string()))?;
    let oldest = match stats.oldest {
        Some(at) => {
            let age = SystemTime::now().duration_since(at).unwrap_or_default();
            format!("{} ago", duration(age))
        }
        None => "none".to_owned(),
    };
    println!("store:     {name}");
    println!("entries:   {}", stats.entries);
    println!("bytes:     {}", bytes(stats.bytes));
    println!("oldest:    {oldest}");
    println!("retention: {retention}");
    Ok(())
}

/// A byte count, and in KiB, MiB or GiB past 1024: `1073741824 (1.0 GiB)`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match UNITS.iter().find(|(_, size)| n >= *size) {
        Some((unit, size)) => format!("{n} ({:.1} {unit})", n as f64 / *size as f64),
        None => n.to_string(),
    }
}

/// A duration in its largest whole unit: `7d`, `3h`, `12m`, `5s`.
pub(crate) fn duration(age: Duration) -> String {
    let secs = age.as_secs();
    match secs {
        86_400.. => format!("{}d", secs / 86_400),
        3_600.. => format!("{}h", secs / 3_600),
        60.. => format!("{}m", secs / 60),
        _ => format!("{secs}s"),
    }
}
