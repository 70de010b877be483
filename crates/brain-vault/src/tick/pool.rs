//! The tick's small thread pool: a map over a slice on up to [`WRITE_THREADS`] threads, in
//! runs, keeping the input's order.

/// At most this many threads write files. Staging does not fsync (one `syncfs` makes the
/// batch durable), so the work is the kernel's file creation and renames: one thread a core.
pub(crate) const WRITE_THREADS: usize = 8;

/// Consecutive items a writing thread takes at a time: the items are in path order, so two
/// threads seldom create files in the same folder at once (creations in one folder queue on
/// its lock).
pub(crate) const WRITE_RUN: usize = 32;

/// `f` over `items` on up to [`WRITE_THREADS`] threads (one a core); results in input order.
/// Each result is written straight into its own slot of one vector allocated up front: no
/// per-thread vectors grown by doubling and merged afterwards (at a first tick's ~10k results
/// of a few hundred bytes, those held megabytes of slack at its peak of memory).
pub(crate) fn parallel_map<T: Sync, R: Send + Sync>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(WRITE_THREADS);
    if items.len() < 4 || threads == 1 {
        return items.iter().map(&f).collect();
    }
    let slots: Vec<std::sync::OnceLock<R>> = items.iter().map(|_| std::sync::OnceLock::new()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.min(items.len()))
            .map(|_| {
                scope.spawn(|| {
                    loop {
                        let start = next.fetch_add(WRITE_RUN, std::sync::atomic::Ordering::Relaxed);
                        if start >= items.len() {
                            break;
                        }
                        let end = (start + WRITE_RUN).min(items.len());
                        for (item, slot) in items[start..end].iter().zip(&slots[start..end]) {
                            // Each index is taken by one thread once: the slot is empty.
                            let _ = slot.set(f(item));
                        }
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
    slots.into_iter().map(|slot| slot.into_inner().expect("every index was taken by one thread")).collect()
}
