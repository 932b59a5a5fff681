//! `plan.csv`: one row per simulated (candidate, cluster size), rendered to bytes.
use std::fmt::Write as _;

use super::PlanReport;

/// The columns of `plan.csv`, in order.
pub const PLAN_CSV_HEADER: &str = "candidate,gpu,mode,gpus,metric,value,target,meets,smallest,completed,jobs,makespan_s,mean_jct_s,p95_jct_s,mean_wait_s,p95_wait_s,throughput_samples_per_s,price_per_gpu_hour,cost_per_hour,profile_origin,note";

/// Renders `report` as `plan.csv` (values in seconds and samples/s, all simulated).
pub fn plan_csv(report: &PlanReport) -> Vec<u8> {
    let mut out = format!("{PLAN_CSV_HEADER}\n");
    let target = &report.target;
    for c in &report.candidates {
        for p in &c.points {
            let s = p.summary.as_ref();
            let num = |f: &dyn Fn(&crate::metrics::Summary) -> f64| {
                s.map_or(String::new(), |s| format!("{:.3}", f(s)))
            };
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                quote(&c.label),
                c.gpu,
                quote(&c.mode),
                p.gpus,
                target.metric.name(),
                if p.value.is_finite() {
                    format!("{:.3}", p.value)
                } else {
                    String::new()
                },
                target.bound,
                p.meets,
                c.smallest == Some(p.gpus),
                s.map_or(String::new(), |s| s.completed.to_string()),
                s.map_or(String::new(), |s| s.jobs.to_string()),
                num(&|s| s.makespan_s),
                num(&|s| s.jct_s.mean),
                num(&|s| s.jct_s.p95),
                num(&|s| s.wait_s.mean),
                num(&|s| s.wait_s.p95),
                num(&|s| s.throughput_samples_per_s),
                c.price_per_gpu_hour
                    .map_or(String::new(), |v| v.to_string()),
                c.cost_per_hour(p.gpus)
                    .map_or(String::new(), |v| format!("{v:.2}")),
                quote(&s.map_or(String::new(), |s| s.labels.profile_origin.clone())),
                quote(p.note.as_deref().unwrap_or("")),
            );
        }
    }
    out.into_bytes()
}

/// A CSV field, quoted when it holds a comma, quote or newline.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}
