//! A job's `jobs.parquet` row as bytes, exactly (every float by its bits), for rows held until
//! every job before them is written: held as bytes, they go to the spill file past the
//! in-memory budget as the CSV rows do ([`super::row_spill`]), where a held outcome stayed in
//! memory, some 300 bytes a job, for as long as the job before it ran.
use super::rows::{JobRow, JobStatus};
use crate::perf::ShareMode;

/// Appends `row`'s bytes to `out`: its fields in declaration order, numbers little-endian, an
/// option as a byte (0 or 1) and the value when there is one, text as its length and bytes.
pub(crate) fn encode(row: &JobRow, out: &mut Vec<u8>) {
    let mut w = Writer(out);
    w.u32(row.job);
    w.text(&row.name);
    w.text(&row.model);
    w.u32(row.batch);
    w.u32(row.image);
    w.u32(row.gpus);
    w.f64(row.arrival_s);
    for v in [row.start_s, row.end_s, row.wait_s, row.jct_s] {
        w.opt(v, Writer::f64);
    }
    w.opt(row.group, Writer::u32);
    w.opt(row.gpu, Writer::u32);
    w.opt(row.slice.as_deref(), Writer::text);
    let mode = row
        .mode
        .and_then(|m| ShareMode::ALL.iter().position(|&a| a == m));
    w.opt(mode, |w, m| w.0.push(m as u8));
    w.f64(row.samples);
    w.opt(row.mean_rate, Writer::f64);
    w.f64(row.exclusive_rate);
    w.opt(row.slowdown, Writer::f64);
    w.0.push(match row.status {
        JobStatus::Completed => 0,
        JobStatus::Unplaceable => 1,
    });
    w.opt(row.energy_j, Writer::f64);
    w.u32(row.preemptions);
}

/// The row [`encode`] wrote as `bytes`; `None` unless they are one such row, whole.
pub(crate) fn decode(bytes: &[u8]) -> Option<JobRow> {
    let mut r = Reader(bytes);
    let job = r.u32()?;
    let name = r.text()?;
    let model = r.text()?;
    let batch = r.u32()?;
    let image = r.u32()?;
    let gpus = r.u32()?;
    let arrival_s = r.f64()?;
    let start_s = r.opt(Reader::f64)?;
    let end_s = r.opt(Reader::f64)?;
    let wait_s = r.opt(Reader::f64)?;
    let jct_s = r.opt(Reader::f64)?;
    let group = r.opt(Reader::u32)?;
    let gpu = r.opt(Reader::u32)?;
    let slice = r.opt(Reader::text)?;
    let mode = match r.opt(Reader::byte)? {
        Some(m) => Some(*ShareMode::ALL.get(usize::from(m))?),
        None => None,
    };
    let samples = r.f64()?;
    let mean_rate = r.opt(Reader::f64)?;
    let exclusive_rate = r.f64()?;
    let slowdown = r.opt(Reader::f64)?;
    let status = match r.byte()? {
        0 => JobStatus::Completed,
        1 => JobStatus::Unplaceable,
        _ => return None,
    };
    let energy_j = r.opt(Reader::f64)?;
    let preemptions = r.u32()?;
    r.0.is_empty().then_some(JobRow {
        job,
        name,
        model,
        batch,
        image,
        gpus,
        arrival_s,
        start_s,
        end_s,
        wait_s,
        jct_s,
        group,
        gpu,
        slice,
        mode,
        samples,
        mean_rate,
        exclusive_rate,
        slowdown,
        status,
        energy_j,
        preemptions,
    })
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    fn text(&mut self, v: &str) {
        // A name or label far below 4 GiB.
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v.as_bytes());
    }

    fn opt<T>(&mut self, v: Option<T>, write: impl FnOnce(&mut Self, T)) {
        self.0.push(u8::from(v.is_some()));
        if let Some(v) = v {
            write(self, v);
        }
    }
}

/// The bytes not read yet.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }

    fn f64(&mut self) -> Option<f64> {
        self.take().map(|b| f64::from_bits(u64::from_le_bytes(b)))
    }

    fn text(&mut self) -> Option<String> {
        let len = self.u32()? as usize;
        if len > self.0.len() {
            return None;
        }
        let (text, rest) = self.0.split_at(len);
        self.0 = rest;
        String::from_utf8(text.to_vec()).ok()
    }

    /// An option of what `read` reads: `None` when the bytes are not one, `Some(None)` when
    /// there is no value.
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.byte()? {
            0 => Some(None),
            1 => read(self).map(Some),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row() -> impl Strategy<Value = JobRow> {
        let float = prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(-0.0),
            Just(f64::INFINITY)
        ];
        (
            (any::<u32>(), ".{0,12}", ".{0,12}", any::<[u32; 3]>()),
            (
                float.clone(),
                proptest::collection::vec(proptest::option::of(float.clone()), 7),
                proptest::option::of(any::<u32>()),
                proptest::option::of(any::<u32>()),
                proptest::option::of(".{0,6}"),
            ),
            (
                proptest::option::of(proptest::sample::select(ShareMode::ALL.to_vec())),
                float.clone(),
                float,
                any::<bool>(),
                any::<u32>(),
            ),
        )
            .prop_map(
                |(
                    (job, name, model, [batch, image, gpus]),
                    (arrival_s, opts, group, gpu, slice),
                    (mode, samples, exclusive_rate, done, preemptions),
                )| JobRow {
                    job,
                    name,
                    model,
                    batch,
                    image,
                    gpus,
                    arrival_s,
                    start_s: opts[0],
                    end_s: opts[1],
                    wait_s: opts[2],
                    jct_s: opts[3],
                    group,
                    gpu,
                    slice,
                    mode,
                    samples,
                    mean_rate: opts[4],
                    exclusive_rate,
                    slowdown: opts[5],
                    status: if done {
                        JobStatus::Completed
                    } else {
                        JobStatus::Unplaceable
                    },
                    energy_j: opts[6],
                    preemptions,
                },
            )
    }

    /// A row as `Debug` writes it: NaN there reads the same as itself, where `==` says not.
    fn bits(row: &JobRow) -> String {
        format!("{row:?}")
    }

    proptest! {
        #[test]
        fn a_row_comes_back_exactly(row in row()) {
            let mut bytes = Vec::new();
            encode(&row, &mut bytes);
            let back = decode(&bytes).expect("decodes");
            prop_assert_eq!(bits(&back), bits(&row));
            for f in [back.arrival_s, back.samples, back.exclusive_rate]
                .iter()
                .zip([row.arrival_s, row.samples, row.exclusive_rate])
            {
                prop_assert_eq!(f.0.to_bits(), f.1.to_bits());
            }
            // Cut short or run on, it is not a row.
            prop_assert!(decode(&bytes[..bytes.len() - 1]).is_none());
            bytes.push(0);
            prop_assert!(decode(&bytes).is_none());
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
        }
    }
}
