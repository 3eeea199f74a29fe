//! The server binary's global allocator: mimalloc, asked the way its fast path wants.
//!
//! Why not `mimalloc::MiMalloc` as it comes: that wrapper hands every request to
//! `mi_malloc_aligned`, and mimalloc serves an aligned request from its plain size classes
//! only when the class is a power of two. Every other request (a 1.4 KiB boxed future, a
//! 48-byte record) takes the over-allocating path: more instructions, and a block
//! `align - 1` bytes larger than asked for. Callgrind over `stoa-load throughput --games
//! 60` counts 7.6 such requests per move through the wrapper, and 3.3 % of all the
//! server's instructions in them (docs/performance.md). The same report upstream:
//! purpleprotocol/mimalloc_rust pull request 170.
//!
//! The rule: mimalloc keeps every block of a size class of 16 bytes or more 16-aligned
//! (an invariant its allocation path asserts, and C's `malloc` promises no less), and the
//! 8-byte class 8-aligned. So a request aligned to at most 8, or to 16 and longer than 8
//! bytes, is aligned by plain `mi_malloc`. Anything else goes the aligned way.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_int, c_long, c_void};

/// `mi_option_purge_delay`: its place in mimalloc's `mi_option_e` (the bindings name only
/// the options they call stable; `the_purge_delay_is_where_the_header_puts_it` checks it).
const PURGE_DELAY: c_int = 15;

/// How long freed memory stays with the process before mimalloc gives it back to the
/// system, ms (mimalloc's default: 10; its arenas wait ten times as long).
pub const PURGE_DELAY_MS: c_long = 1000;

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`], unless the operator set
/// `MIMALLOC_PURGE_DELAY` (or its old name) in the environment: theirs wins. Called first
/// in `main`, before any other thread exists (mimalloc's options are not thread-safe).
///
/// Why: with mimalloc's 10 ms, memory a finished game or a request frees goes back to the
/// system before the next ones reuse it, and comes back as fresh pages to be zeroed (a
/// whole 2 MiB huge page each, as mimalloc asks for huge pages): `stoa-load throughput`
/// counts 4–9 page faults per 1,000 moves with it, and `perf` puts 7–12 % of the server's
/// time in the kernel's `clear_page_erms`. With a second, memory reused within it stays,
/// and only what the process's own growth needs is faulted in (0.7 per 1,000 moves,
/// docs/performance.md); memory left unused after a spike still goes back a second later.
pub fn configure() {
    let set_by_operator = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some());
    if !set_by_operator {
        // SAFETY: a plain option write; no other thread runs yet (see above).
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) }
    }
}

/// mimalloc, with plain calls wherever the plain size classes are aligned enough.
pub struct Mimalloc;

/// Whether a plain `mi_malloc` of `size` bytes is aligned to `align`.
fn plain(size: usize, align: usize) -> bool {
    align <= 8 || (align == 16 && size > 8)
}

// SAFETY: every pointer comes from mimalloc and goes back to it (`mi_free` takes blocks of
// either kind); the plain calls are made only where `plain` holds, where mimalloc's blocks
// have the layout's alignment (tested below over every size and alignment up to 4 KiB).
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a non-zero size (the caller's contract) and a power-of-two alignment.
        unsafe {
            if plain(layout.size(), layout.align()) {
                libmimalloc_sys::mi_malloc(layout.size()).cast()
            } else {
                libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if plain(layout.size(), layout.align()) {
                libmimalloc_sys::mi_zalloc(layout.size()).cast()
            } else {
                libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { libmimalloc_sys::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; the new block keeps its
        // alignment by the same rule as `alloc`.
        unsafe {
            if plain(new_size, layout.align()) {
                libmimalloc_sys::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                libmimalloc_sys::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align())
                    .cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block is aligned as asked and holds what is written into it, through every
    /// entry point, for every size up to 4 KiB and every alignment up to 4 KiB — on both
    /// sides of the plain/aligned rule. Several blocks of a size are live at once, so the
    /// check sees more than the first block of a page.
    #[test]
    fn blocks_are_aligned_and_usable() {
        let a = Mimalloc;
        for align_log in 0..=12 {
            let align = 1usize << align_log;
            for size in 1..=4096usize {
                let layout = Layout::from_size_align(size, align).expect("a valid layout");
                let mut live = Vec::new();
                for i in 0..3u8 {
                    // SAFETY: a non-zero size; each block is freed below with its layout.
                    let p = unsafe {
                        match i {
                            0 => a.alloc(layout),
                            _ => a.alloc_zeroed(layout),
                        }
                    };
                    assert!(!p.is_null(), "size {size} align {align}");
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    if i > 0 {
                        // SAFETY: `size` bytes were just allocated and zeroed.
                        let zeroed = unsafe { std::slice::from_raw_parts(p, size) };
                        assert!(zeroed.iter().all(|&b| b == 0), "size {size}");
                    }
                    // SAFETY: `size` bytes were just allocated.
                    unsafe { p.write_bytes(0xA5 ^ i, size) };
                    live.push((p, i));
                }
                for (p, i) in live {
                    // SAFETY: written above; then grown with its own layout and freed with
                    // the grown layout.
                    unsafe {
                        let grown = size + 24;
                        let q = a.realloc(p, layout, grown);
                        assert!(!q.is_null());
                        assert_eq!(
                            q as usize % align,
                            0,
                            "realloc {size}->{grown} align {align}"
                        );
                        let kept = std::slice::from_raw_parts(q, size);
                        assert!(kept.iter().all(|&b| b == 0xA5 ^ i), "realloc keeps {size}");
                        let grown_layout = Layout::from_size_align(grown, align).expect("valid");
                        a.dealloc(q, grown_layout);
                    }
                }
            }
        }
    }

    /// The options around the purge delay hold their documented defaults, so
    /// [`PURGE_DELAY`] is its place in this mimalloc's option list (a shifted list would
    /// have `configure` set another option). Then `configure` sets it, unless the
    /// environment did.
    #[test]
    fn the_purge_delay_is_where_the_header_puts_it() {
        use libmimalloc_sys::mi_option_get;
        // SAFETY: plain option reads and writes; this test alone touches these options.
        unsafe {
            // eager_commit_delay (1), purge_delay (10), use_numa_nodes (0), ... os_tag (100).
            assert_eq!(mi_option_get(PURGE_DELAY - 1), 1);
            if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
                assert_eq!(mi_option_get(PURGE_DELAY), 10);
            }
            assert_eq!(mi_option_get(PURGE_DELAY + 1), 0);
            assert_eq!(mi_option_get(PURGE_DELAY + 3), 100);
            configure();
            if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
                assert_eq!(mi_option_get(PURGE_DELAY), PURGE_DELAY_MS);
            }
        }
    }

    #[test]
    fn the_rule_sends_only_small_alignments_plain() {
        assert!(plain(8, 8));
        assert!(plain(21, 8));
        assert!(plain(48, 16));
        assert!(plain(24, 16));
        assert!(plain(1456, 8));
        assert!(plain(3, 1));
        assert!(!plain(8, 16));
        assert!(!plain(128, 32));
        assert!(!plain(4096, 4096));
    }
}
