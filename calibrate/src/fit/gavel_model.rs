//! Gavel's pair table as a measured [`PerfModel`] (`colo predict --profile gavel:v100`): a job
//! alone runs at its measured rate, a measured pair at its measured rates; any other set (three
//! or more jobs, or a pair the table lacks) falls back to the parametric model fitted to the
//! table's pairs (MPS form), and says so through the origins.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use colo_sim::hardware::{self, GpuSpec};
use colo_sim::perf::answer::{Predictor, ProfileName};
use colo_sim::perf::profile::{
    MemoryParams, MigParams, MpsParams, PROFILE_VERSION, Profile, Provenance, TimeSliceParams,
};
use colo_sim::perf::{
    ClassLookup, CoRun, JobClass, Origin, Parametric, PerfError, PerfModel, ProfileSet, ShareMode,
};
use colo_sim::workload::ModelKey;

use super::TableError;
use super::gavel::{GavelTable, model_key, pair_problem, parse_table};
use super::lm::LmConfig;
use super::parametric::fit;

/// Gavel's table shipped inside the crate (stanford-futuredata/gavel, MIT).
const SHIPPED_TABLE: &[u8] =
    include_bytes!("../../data/external/gavel/simulation_throughputs.json.gz");

/// Where the shipped table lives in the repository.
pub const SHIPPED_TABLE_PATH: &str = "calibrate/data/external/gavel/simulation_throughputs.json.gz";

/// `colo predict --profile gavel:NAME`: Gavel's measured pairs on `gpu` (one of
/// [`hardware::gavel_gpus`]) from the shipped table, and a parametric fit to them for other sets. No
/// held-out errors, no power.
///
/// # Errors
/// [`TableError`] if the shipped table cannot be read for `gpu`.
pub fn shipped_predictor(gpu: &'static GpuSpec) -> Result<Predictor, TableError> {
    let path = std::path::Path::new(SHIPPED_TABLE_PATH);
    let text =
        super::text_maybe_gzipped(SHIPPED_TABLE.to_vec()).map_err(|source| TableError::Io {
            path: path.to_owned(),
            source,
        })?;
    let table = parse_table(&text, path, gpu.name)?;
    let label = format!(
        "gavel:{} (measured pairs; other sets from a parametric fit to them)",
        gpu.name
    );
    Ok(Predictor {
        gpu,
        model: Arc::new(GavelModel::new(table)),
        kernel: None,
        parametric: false,
        profile: ProfileName::Named(label),
        origin: "measured".into(),
        kernel_held_out: Vec::new(),
        parametric_held_out: Vec::new(),
        power: Err("Gavel's table holds throughputs only, no power measurements".into()),
    })
}

/// Measured pairs first, the fitted parametric model for the rest.
pub struct GavelModel {
    table: GavelTable,
    index: BTreeMap<ModelKey, usize>,
    fallback: Parametric,
    fitted: Profile,
}

impl GavelModel {
    /// The model over `table`, fitting the fallback to all of its pairs.
    pub fn new(table: GavelTable) -> Self {
        let gpu = hardware::gavel_gpu(&table.gpu).unwrap_or(&hardware::gavel_gpus()[0]);
        let problem = pair_problem(
            &table,
            gpu,
            ShareMode::Mps,
            table.pairs.iter().map(|(k, v)| (*k, *v)),
        );
        let fitted = fit(&problem, &LmConfig::default());
        let mut profile = fitted.profile(&problem);
        profile.version = PROFILE_VERSION;
        profile.provenance = Provenance {
            source: "parametric model fitted to Gavel's measured pairs (MPS form)".into(),
            data: vec!["calibrate/data/external/gavel/simulation_throughputs.json.gz".into()],
            created: String::new(),
            driver: None,
        };
        profile.memory = MemoryParams {
            context_gib: 0.0,
            mps_context_gib: 0.0,
        };
        profile.timeslice = TimeSliceParams {
            switch_overhead: profile.timeslice.switch_overhead,
            origin: Some(Origin::Fitted),
        };
        profile.mps = MpsParams {
            interference: profile.mps.interference,
            queueing: 0.0,
            origin: Some(Origin::Fitted),
        };
        profile.mig = MigParams {
            efficiency: 1.0,
            origin: Some(Origin::Provisional),
        };
        let mut set = ProfileSet::default();
        set.insert(
            profile.clone(),
            PathBuf::from(format!("gavel:{}", table.gpu)),
        );
        let index = table
            .jobs
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (model_key(name), i))
            .collect();
        Self {
            table,
            index,
            fallback: Parametric::new(Arc::new(set)),
            fitted: profile,
        }
    }

    /// The job keys the table knows, as MODEL:BATCH:IMAGE.
    pub fn keys(&self) -> Vec<String> {
        self.index.keys().map(ModelKey::to_string).collect()
    }

    /// The measured rates of a pair, in the order given, if the table has it.
    fn measured_pair(&self, a: &ModelKey, b: &ModelKey) -> Option<(f64, f64)> {
        let (i, j) = (*self.index.get(a)?, *self.index.get(b)?);
        if i <= j {
            self.table.pairs.get(&(i, j)).copied()
        } else {
            self.table.pairs.get(&(j, i)).map(|(x, y)| (*y, *x))
        }
    }
}

impl PerfModel for GavelModel {
    fn name(&self) -> &'static str {
        "gavel-measured"
    }

    fn lookup(&self) -> &dyn ClassLookup {
        self
    }

    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]) {
        if let [a, b] = set.tenants
            && let Some((x, y)) = self.measured_pair(&a.class.key, &b.class.key)
        {
            out[0] = x;
            out[1] = y;
            return;
        }
        self.fallback.rates(set, out);
    }
}

/// Classes from Gavel's table: measured solo rates, fitted sharing, no memory (it records none).
impl ClassLookup for GavelModel {
    fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
        let entry = self
            .fitted
            .entry(key)
            .ok_or_else(|| PerfError::UnknownModel {
                path: PathBuf::from(format!("gavel:{}", self.table.gpu)),
                gpu: gpu.name.to_owned(),
                key: key.clone(),
                hint: format!("Gavel's table has: {}", self.keys().join(", ")),
            })?;
        // The table's rates are measured; it records no memory and no spread.
        Ok(JobClass {
            memory_gib: 0.0,
            spread: None,
            origin: Origin::Measured,
            ..entry.class(Origin::Measured)
        })
    }

    fn origin(&self, _gpu: &GpuSpec) -> Origin {
        Origin::Measured
    }

    fn mode_origin(&self, _gpu: &GpuSpec, _mode: ShareMode) -> Origin {
        Origin::Fitted
    }

    fn footprint_gib(&self, _gpu: &GpuSpec, _mode: ShareMode, _class: &JobClass) -> f64 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use colo_sim::perf::query::{SetQuery, predict_set};

    fn model() -> GavelModel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/external/gavel/simulation_throughputs.json.gz");
        let full = super::super::gavel::read_table(&path, "v100").unwrap();
        // A subset keeps the fallback fit fast in debug builds.
        GavelModel::new(full.first_jobs(6))
    }

    #[test]
    fn issue_37_it_names_itself_lists_the_tables_jobs_and_takes_no_memory() {
        let m = model();
        let gpu = hardware::gavel_gpu("v100").unwrap();
        assert_eq!(m.name(), "gavel-measured");
        // The first six jobs of Gavel's V100 table, as keys (in the index's order: compared
        // sorted).
        let mut expected: Vec<String> = m
            .table
            .jobs
            .iter()
            .map(|(name, _)| model_key(name).to_string())
            .collect();
        expected.sort();
        let mut keys = m.keys();
        keys.sort();
        assert_eq!(keys, expected);
        assert!(m.keys()[0].starts_with("gavel_"), "{:?}", m.keys());
        let class = ClassLookup::class(&m, gpu, &model_key(&m.table.jobs[0].0)).unwrap();
        assert_eq!(class.memory_gib, 0.0);
        assert_eq!(
            ClassLookup::footprint_gib(&m, gpu, ShareMode::Mps, &class),
            0.0
        );
        assert_eq!(ClassLookup::origin(&m, gpu), Origin::Measured);
    }

    #[test]
    fn a_measured_pair_comes_back_exactly_and_alone_is_the_solo_rate() {
        let m = model();
        let gpu = hardware::gavel_gpu("v100").unwrap();
        let ((i, j), (x, y)) = m.table.pairs.iter().next().map(|(k, v)| (*k, *v)).unwrap();
        let keys = [model_key(&m.table.jobs[i].0), model_key(&m.table.jobs[j].0)];
        let query = |jobs: Vec<ModelKey>| SetQuery {
            gpu,
            mode: ShareMode::Mps,
            jobs,
            sm_budgets: vec![],
            layout: None,
        };
        let pair = predict_set(&m, &query(keys.to_vec())).unwrap();
        assert_eq!(
            (pair.jobs[0].samples_per_s, pair.jobs[1].samples_per_s),
            (x, y)
        );
        let alone = predict_set(&m, &query(vec![keys[0].clone()])).unwrap();
        assert!((alone.jobs[0].samples_per_s - m.table.jobs[i].1).abs() < 1e-9);
        let unknown = predict_set(&m, &query(vec![ModelKey::new("gavel_vgg", 1, 1)])).unwrap_err();
        assert!(
            unknown.to_string().contains("Gavel's table has"),
            "{unknown}"
        );
    }
}
