//! One summary figure's values (a job's JCT, wait or slowdown), kept for its exact statistics:
//! in memory up to [`SPILL_AT`] values, beyond that in sorted runs in anonymous temporary files
//! (in `TMPDIR`, gone when closed) that the statistics merge, so that a replay of 100M jobs
//! holds 128 MiB of each figure at most instead of 800 MiB, and its figures are the same bits.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::{Stats, sort_total, total_key as key, total_unkey as unkey};

/// Values held in memory before they are sorted and written out as a run: 128 MiB of `f64`.
pub const SPILL_AT: usize = 1 << 24;

/// Bytes a run is read and written through at a time.
const RUN_BUFFER: usize = 1 << 20;

/// A figure's values, in no order until [`Values::stats`].
#[derive(Debug)]
pub struct Values {
    memory: Vec<f64>,
    /// Values kept in memory before a run is spilled (`usize::MAX`: never).
    spill_at: usize,
    /// The spilled runs, each sorted: its file and its length.
    runs: Vec<(File, usize)>,
    /// The first error writing a run; [`Values::stats`] returns it (values after it are not
    /// kept).
    error: Option<std::io::Error>,
}

impl Values {
    /// Values spilled in runs of `spill_at`, room made for `expected` (at most a run's).
    pub fn spilling_at(expected: usize, spill_at: usize) -> Self {
        Values {
            memory: Vec::with_capacity(expected.min(spill_at)),
            spill_at: spill_at.max(1),
            runs: Vec::new(),
            error: None,
        }
    }

    /// Values held.
    fn len(&self) -> usize {
        self.memory.len() + self.runs.iter().map(|r| r.1).sum::<usize>()
    }

    pub fn push(&mut self, value: f64) {
        if self.error.is_some() {
            return;
        }
        self.memory.push(value);
        if self.memory.len() >= self.spill_at
            && let Err(e) = self.spill()
        {
            self.error = Some(e);
        }
    }

    /// Sorts the values in memory and writes them to a new temporary file as a run.
    fn spill(&mut self) -> std::io::Result<()> {
        sort_total(&mut self.memory);
        let mut out = BufWriter::with_capacity(RUN_BUFFER, tempfile::tempfile()?);
        for v in &self.memory {
            out.write_all(&v.to_le_bytes())?;
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push((file, self.memory.len()));
        self.memory.clear();
        Ok(())
    }

    /// The values' statistics, the same bits as [`Stats::of`] of all of them in one list;
    /// the first error writing or reading a run.
    pub fn stats(mut self) -> std::io::Result<Stats> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.runs.is_empty() {
            return Ok(Stats::of(&mut self.memory));
        }
        sort_total(&mut self.memory);
        let n = self.len();
        let mut merge = Merge::new(self.runs, self.memory)?;
        let stats = Stats::of_sorted(n, std::iter::from_fn(|| merge.next()));
        match merge.error {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    }
}

/// Below this many values a figure's statistics are not worth a thread of their own.
const PARALLEL_MIN: usize = 1 << 16;

/// The statistics of the three figures, the first beside the other two when they are large
/// (`rayon::join`: each is a sort, a few passes over its values, at a run's end with the
/// writer thread done): a million jobs' summary in about two thirds of the time, holding two
/// sorts' scratch at once instead of one. Small ones go one after the other, without starting
/// the pool.
pub fn stats_of([first, second, third]: [Values; 3]) -> std::io::Result<[Stats; 3]> {
    if first.len() < PARALLEL_MIN {
        return Ok([first.stats()?, second.stats()?, third.stats()?]);
    }
    let (first, (second, third)) =
        rayon::join(|| first.stats(), || (second.stats(), third.stats()));
    Ok([first?, second?, third?])
}

/// A k-way merge of sorted runs (the files and the sorted values left in memory), in
/// `f64::total_cmp` order; values equal in it are the same bits, so ties may go either way.
struct Merge {
    readers: Vec<(BufReader<File>, usize)>,
    memory: std::vec::IntoIter<f64>,
    /// Each source's next value as its order key, and the source (the memory's is
    /// `readers.len()`).
    heads: BinaryHeap<Reverse<(u64, usize)>>,
    error: Option<std::io::Error>,
}

impl Merge {
    fn new(runs: Vec<(File, usize)>, memory: Vec<f64>) -> std::io::Result<Self> {
        let mut merge = Merge {
            readers: runs
                .into_iter()
                .map(|(f, len)| (BufReader::with_capacity(RUN_BUFFER, f), len))
                .collect(),
            memory: memory.into_iter(),
            heads: BinaryHeap::new(),
            error: None,
        };
        for source in 0..=merge.readers.len() {
            if let Some(v) = merge.pull(source)? {
                merge.heads.push(Reverse((key(v), source)));
            }
        }
        Ok(merge)
    }

    /// The next value of `source`, if it has one left.
    fn pull(&mut self, source: usize) -> std::io::Result<Option<f64>> {
        let Some((reader, left)) = self.readers.get_mut(source) else {
            return Ok(self.memory.next());
        };
        if *left == 0 {
            return Ok(None);
        }
        *left -= 1;
        let mut bytes = [0u8; 8];
        reader.read_exact(&mut bytes)?;
        Ok(Some(f64::from_le_bytes(bytes)))
    }

    /// The least value left (`None` when done or after a read error, kept in `error`).
    fn next(&mut self) -> Option<f64> {
        let Reverse((k, source)) = self.heads.pop()?;
        match self.pull(source) {
            Ok(Some(v)) => self.heads.push(Reverse((key(v), source))),
            Ok(None) => {}
            Err(e) => {
                self.error = Some(e);
                self.heads.clear();
            }
        }
        Some(unkey(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed | 1;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly spread positive figures, some repeats and a few specials.
            out.push(match i % 97 {
                0 => 0.0,
                1 => -0.0,
                2 => 1.0,
                3 => f64::INFINITY,
                _ => (x >> 11) as f64 / (1u64 << 40) as f64,
            });
        }
        out
    }

    /// Spilled in runs of many sizes (one value a run, a run's worth exactly, a partial last
    /// run), the statistics are the bits of the one-list ones.
    #[test]
    fn spilled_statistics_are_the_in_memory_bits() {
        for (n, spill_at) in [
            (0, 4),
            (1, 1),
            (7, 1),
            (1000, 10),
            (1000, 1000),
            (10_001, 999),
            (20_000, 4096),
        ] {
            let all = values(n, n as u64 + 3);
            let mut spilled = Values::spilling_at(n, spill_at);
            let mut kept = Values::spilling_at(n, usize::MAX);
            for &v in &all {
                spilled.push(v);
                kept.push(v);
            }
            assert_eq!(spilled.len(), n);
            assert_eq!(
                spilled.runs.len(),
                n / spill_at,
                "n {n} spill_at {spill_at}"
            );
            let want = Stats::of(&mut all.clone());
            let bits = |s: Stats| [s.mean, s.p50, s.p95, s.p99, s.max].map(f64::to_bits);
            assert_eq!(
                bits(spilled.stats().unwrap()),
                bits(want),
                "n {n} spill_at {spill_at}"
            );
            assert_eq!(bits(kept.stats().unwrap()), bits(want));
        }
    }

    /// Large figures taken side by side give each one's own statistics.
    #[test]
    fn three_figures_side_by_side_are_each_ones_own() {
        let lists: Vec<Vec<f64>> = (0..3).map(|k| values(PARALLEL_MIN + 5, k + 11)).collect();
        let fill = |list: &Vec<f64>| {
            let mut v = Values::spilling_at(list.len(), 40_000);
            list.iter().for_each(|&x| v.push(x));
            v
        };
        let together = stats_of([fill(&lists[0]), fill(&lists[1]), fill(&lists[2])]).unwrap();
        let bits = |s: Stats| [s.mean, s.p50, s.p95, s.p99, s.max].map(f64::to_bits);
        for (list, got) in lists.iter().zip(together) {
            assert_eq!(bits(got), bits(Stats::of(&mut list.clone())));
        }
    }

    #[test]
    fn keys_keep_total_order() {
        let mut all = values(5000, 9);
        all.extend([
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            f64::MIN_POSITIVE / 2.0,
            f64::NAN,
        ]);
        let mut by_key = all.clone();
        by_key.sort_unstable_by_key(|&v| key(v));
        all.sort_unstable_by(f64::total_cmp);
        assert_eq!(
            by_key.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            all.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        for v in all {
            assert_eq!(unkey(key(v)).to_bits(), v.to_bits());
        }
    }
}
