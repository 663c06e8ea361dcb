//! A global allocator that counts live heap bytes and their peak, shared by the memory
//! benchmarks of every crate (each installs [`Counting`] as its `#[global_allocator]`).
//!
//! ```
//! use std::sync::atomic::Ordering;
//!
//! use parrot_bench_corpus::heap::{Counting, LIVE, PEAK};
//!
//! #[global_allocator]
//! static ALLOCATOR: Counting = Counting;
//!
//! let before = LIVE.load(Ordering::Relaxed);
//! PEAK.store(before, Ordering::Relaxed);
//! let buffer = vec![0u8; 1 << 20];
//! assert!(PEAK.load(Ordering::Relaxed) - before >= buffer.len());
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting live bytes and their peak.
pub struct Counting;

/// The bytes allocated and not yet freed.
pub static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The largest [`LIVE`] has been since it was last stored to (a benchmark stores the current
/// [`LIVE`] into it before the call it measures).
pub static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[allow(unsafe_code)]
// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counters are bookkeeping only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}
