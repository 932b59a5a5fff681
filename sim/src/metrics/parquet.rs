//! `jobs.parquet`: the rows of `jobs.csv` as a columnar file for large replays (cargo feature
//! `parquet`; `colo simulate --columnar`). Same columns, names and order as the CSV
//! ([`super::rows::JobRow`]); numbers at full precision (the CSV rounds times to 3 decimals),
//! empty CSV fields as nulls, text as UTF-8 strings, Snappy-compressed row groups of
//! [`ROW_GROUP`] rows. pandas (`pd.read_parquet`, with pyarrow) and polars read it as it is.
use std::io::Write;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use super::rows::{JobRow, JobStatus};

/// Rows per row group: a reader can skip or load one at a time; the writer holds one.
pub const ROW_GROUP: usize = 65_536;

/// The file's schema, column for column as `jobs.csv`.
const SCHEMA: &str = "message jobs {
    REQUIRED INT32 job (INTEGER(32, false));
    REQUIRED BYTE_ARRAY name (UTF8);
    REQUIRED BYTE_ARRAY model (UTF8);
    REQUIRED INT32 batch (INTEGER(32, false));
    REQUIRED INT32 image (INTEGER(32, false));
    REQUIRED INT32 gpus (INTEGER(32, false));
    REQUIRED DOUBLE arrival_s;
    OPTIONAL DOUBLE start_s;
    OPTIONAL DOUBLE end_s;
    OPTIONAL DOUBLE wait_s;
    OPTIONAL DOUBLE jct_s;
    OPTIONAL INT32 group (INTEGER(32, false));
    OPTIONAL INT32 gpu (INTEGER(32, false));
    OPTIONAL BYTE_ARRAY slice (UTF8);
    OPTIONAL BYTE_ARRAY mode (UTF8);
    REQUIRED DOUBLE samples;
    OPTIONAL DOUBLE mean_rate;
    REQUIRED DOUBLE exclusive_rate;
    OPTIONAL DOUBLE slowdown;
    REQUIRED BYTE_ARRAY status (UTF8);
    OPTIONAL DOUBLE energy_j;
    REQUIRED INT32 preemptions (INTEGER(32, false));
}";

/// One column's buffered values: present values, and per row whether it is there (optional
/// columns only).
#[derive(Default)]
struct Column<T> {
    values: Vec<T>,
    present: Vec<i16>,
}

impl<T> Column<T> {
    fn push(&mut self, value: T) {
        self.values.push(value);
    }

    fn push_opt(&mut self, value: Option<T>) {
        self.present.push(i16::from(value.is_some()));
        self.values.extend(value);
    }
}

/// Every column of the row group being filled.
#[derive(Default)]
struct Columns {
    job: Column<i32>,
    name: Column<ByteArray>,
    model: Column<ByteArray>,
    batch: Column<i32>,
    image: Column<i32>,
    gpus: Column<i32>,
    arrival_s: Column<f64>,
    start_s: Column<f64>,
    end_s: Column<f64>,
    wait_s: Column<f64>,
    jct_s: Column<f64>,
    group: Column<i32>,
    gpu: Column<i32>,
    slice: Column<ByteArray>,
    mode: Column<ByteArray>,
    samples: Column<f64>,
    mean_rate: Column<f64>,
    exclusive_rate: Column<f64>,
    slowdown: Column<f64>,
    status: Column<ByteArray>,
    energy_j: Column<f64>,
    preemptions: Column<i32>,
}

/// Unsigned 32-bit values go in INT32 columns annotated unsigned: the same bits.
fn u32_bits(v: u32) -> i32 {
    i32::from_ne_bytes(v.to_ne_bytes())
}

fn text(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

/// Writes `jobs.parquet` row by row into `out`, a row group at a time.
pub struct JobsParquet<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    columns: Columns,
    rows: usize,
}

impl<W: Write + Send> JobsParquet<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Result<Self, ParquetError> {
        let schema = Arc::new(parse_message_type(SCHEMA)?);
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_created_by("colo".to_owned())
                .build(),
        );
        Ok(Self {
            writer: SerializedFileWriter::new(out, schema, props)?,
            columns: Columns::default(),
            rows: 0,
        })
    }

    /// Appends one row; a full row group is written out.
    pub fn push(&mut self, row: &JobRow) -> Result<(), ParquetError> {
        let c = &mut self.columns;
        c.job.push(u32_bits(row.job));
        c.name.push(text(&row.name));
        c.model.push(text(&row.model));
        c.batch.push(u32_bits(row.batch));
        c.image.push(u32_bits(row.image));
        c.gpus.push(u32_bits(row.gpus));
        c.arrival_s.push(row.arrival_s);
        c.start_s.push_opt(row.start_s);
        c.end_s.push_opt(row.end_s);
        c.wait_s.push_opt(row.wait_s);
        c.jct_s.push_opt(row.jct_s);
        c.group.push_opt(row.group.map(u32_bits));
        c.gpu.push_opt(row.gpu.map(u32_bits));
        c.slice.push_opt(row.slice.as_deref().map(text));
        c.mode.push_opt(row.mode.map(|m| text(m.label())));
        c.samples.push(row.samples);
        c.mean_rate.push_opt(row.mean_rate);
        c.exclusive_rate.push(row.exclusive_rate);
        c.slowdown.push_opt(row.slowdown);
        c.status.push(text(match row.status {
            JobStatus::Completed => "completed",
            JobStatus::Unplaceable => "unplaceable",
        }));
        c.energy_j.push_opt(row.energy_j);
        c.preemptions.push(u32_bits(row.preemptions));
        self.rows += 1;
        if self.rows == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group()?;
        let c = &mut self.columns;
        let mut index = 0;
        while let Some(mut column) = group.next_column()? {
            // Columns come in schema order.
            let levels = |col: &[i16], optional: bool| optional.then(|| col.to_vec());
            macro_rules! write {
                ($kind:ty, $col:expr, $optional:expr) => {{
                    let present = levels(&$col.present, $optional);
                    column
                        .typed::<$kind>()
                        .write_batch(&$col.values, present.as_deref(), None)?;
                }};
            }
            match index {
                0 => write!(Int32Type, c.job, false),
                1 => write!(ByteArrayType, c.name, false),
                2 => write!(ByteArrayType, c.model, false),
                3 => write!(Int32Type, c.batch, false),
                4 => write!(Int32Type, c.image, false),
                5 => write!(Int32Type, c.gpus, false),
                6 => write!(DoubleType, c.arrival_s, false),
                7 => write!(DoubleType, c.start_s, true),
                8 => write!(DoubleType, c.end_s, true),
                9 => write!(DoubleType, c.wait_s, true),
                10 => write!(DoubleType, c.jct_s, true),
                11 => write!(Int32Type, c.group, true),
                12 => write!(Int32Type, c.gpu, true),
                13 => write!(ByteArrayType, c.slice, true),
                14 => write!(ByteArrayType, c.mode, true),
                15 => write!(DoubleType, c.samples, false),
                16 => write!(DoubleType, c.mean_rate, true),
                17 => write!(DoubleType, c.exclusive_rate, false),
                18 => write!(DoubleType, c.slowdown, true),
                19 => write!(ByteArrayType, c.status, false),
                20 => write!(DoubleType, c.energy_j, true),
                21 => write!(Int32Type, c.preemptions, false),
                _ => {
                    return Err(ParquetError::General(format!(
                        "jobs.parquet: schema column {index} has no writer"
                    )));
                }
            }
            column.close()?;
            index += 1;
        }
        group.close()?;
        // A fresh set of columns: no list of them to keep in step with the struct.
        *c = Columns::default();
        self.rows = 0;
        Ok(())
    }

    /// Writes what is buffered and the file's footer; hands `out` back.
    pub fn finish(mut self) -> Result<W, ParquetError> {
        self.flush()?;
        self.writer.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::ShareMode;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    fn row(job: u32, completed: bool) -> JobRow {
        JobRow {
            job,
            name: format!("j{job}, \"quoted\""),
            model: "resnet50".into(),
            batch: 64,
            image: 224,
            gpus: 1,
            arrival_s: f64::from(job) * 0.1234567,
            start_s: completed.then_some(1.5),
            end_s: completed.then_some(2.5),
            wait_s: completed.then_some(0.25),
            jct_s: completed.then_some(1.25),
            group: completed.then_some(0),
            gpu: completed.then_some(u32::MAX),
            slice: None,
            mode: completed.then_some(ShareMode::Mps),
            samples: 1e6,
            mean_rate: completed.then_some(100.0),
            exclusive_rate: 120.0,
            slowdown: completed.then_some(1.2),
            status: if completed {
                JobStatus::Completed
            } else {
                JobStatus::Unplaceable
            },
            energy_j: completed.then_some(3.0),
            preemptions: 0,
        }
    }

    #[test]
    fn rows_read_back_with_their_values_nulls_and_row_groups() {
        let n = ROW_GROUP + 3;
        let mut w = JobsParquet::new(Vec::new()).unwrap();
        for j in 0..n as u32 {
            w.push(&row(j, j % 3 != 0)).unwrap();
        }
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&w.finish().unwrap()).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().num_rows(), n as i64);
        assert_eq!(meta.num_row_groups(), 2, "a full group and the rest");
        let names: Vec<String> = meta
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        let mut csv = csv::Writer::from_writer(Vec::new());
        csv.serialize(row(0, true)).unwrap();
        let csv = String::from_utf8(csv.into_inner().unwrap()).unwrap();
        assert_eq!(
            Some(names.join(",").as_str()),
            csv.lines().next(),
            "the CSV's columns, in order"
        );
        let rows: Vec<parquet::record::Row> = reader
            .get_row_iter(None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), n);
        let get = |r: &parquet::record::Row, name: &str| -> Field {
            r.get_column_iter()
                .find(|(c, _)| c.as_str() == name)
                .map(|(_, f)| f.clone())
                .unwrap()
        };
        assert_eq!(
            get(&rows[0], "start_s"),
            Field::Null,
            "unplaceable: no start"
        );
        assert_eq!(get(&rows[0], "status"), Field::Str("unplaceable".into()));
        assert_eq!(get(&rows[1], "start_s"), Field::Double(1.5));
        assert_eq!(get(&rows[1], "gpu"), Field::UInt(u32::MAX));
        assert_eq!(get(&rows[1], "mode"), Field::Str("mps".into()));
        assert_eq!(get(&rows[1], "name"), Field::Str("j1, \"quoted\"".into()));
        assert_eq!(
            get(&rows[n - 1], "arrival_s"),
            Field::Double(f64::from(n as u32 - 1) * 0.1234567),
            "full precision"
        );
    }
}
