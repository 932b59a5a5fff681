//! Kubernetes pod history: one pod object per line (JSON Lines), as
//! `kubectl get pods --all-namespaces -o json | jq -c '.items[]'` writes it. Only the fields
//! below are read; every other field of the pod is ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::SkipReason;
use super::row::{Col, RawJob, Row, Skip, gpu_value, positive_duration, time_in_range, unparsable};
use super::time::parse_rfc3339;

/// The extended resource a pod asks GPUs with (the NVIDIA device plugin's).
pub(crate) const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// The pod's fields as the "columns" skips and strict errors name.
const POD: Col = field("pod");
const NAME: Col = field("metadata.name");
const CREATED: Col = field("metadata.creationTimestamp");
const PHASE: Col = field("status.phase");
const GPUS: Col = field("spec.containers[].resources.requests.nvidia.com/gpu");
const STARTED: Col = field("status.containerStatuses[].state.terminated.startedAt");
const FINISHED: Col = field("status.containerStatuses[].state.terminated.finishedAt");

/// The field that holds a pod's arrival, named when it is out of range.
pub(crate) const SUBMIT_FIELD: &str = CREATED.name;

const fn field(name: &'static str) -> Col {
    Col { idx: 0, name }
}

/// How pod lines are read.
pub(crate) struct KubeCols {
    all_states: bool,
}

#[derive(Deserialize)]
struct Pod {
    metadata: Option<Metadata>,
    spec: Option<PodSpec>,
    status: Option<PodStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    name: Option<String>,
    namespace: Option<String>,
    creation_timestamp: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    containers: Option<Vec<Container>>,
    init_containers: Option<Vec<Container>>,
}

#[derive(Deserialize)]
struct Container {
    resources: Option<Resources>,
}

#[derive(Deserialize)]
struct Resources {
    requests: Option<BTreeMap<String, serde_json::Value>>,
    limits: Option<BTreeMap<String, serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodStatus {
    phase: Option<String>,
    start_time: Option<String>,
    container_statuses: Option<Vec<ContainerStatus>>,
}

#[derive(Deserialize)]
struct ContainerStatus {
    state: Option<ContainerState>,
}

#[derive(Deserialize)]
struct ContainerState {
    terminated: Option<Terminated>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Terminated {
    started_at: Option<String>,
    finished_at: Option<String>,
}

impl KubeCols {
    pub fn new(all_states: bool) -> Self {
        KubeCols { all_states }
    }

    /// One line as a job named `namespace/name`: arrival from its creation, run time from its
    /// containers' first start to their last finish, GPUs from its `nvidia.com/gpu` requests.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let pod = read_pod(row)?;
        let metadata = pod.metadata.as_ref();
        let name = required(metadata.and_then(|m| m.name.as_deref()), NAME)?;
        let name = match metadata.and_then(|m| m.namespace.as_deref()) {
            Some(namespace) => format!("{namespace}/{name}"),
            None => name.to_owned(),
        };
        self.check_phase(&pod)?;
        let created = required(
            metadata.and_then(|m| m.creation_timestamp.as_deref()),
            CREATED,
        )?;
        let submit_s = time_in_range(time(created, CREATED)?, CREATED)?;
        let gpus = gpu_value(pod_gpus(&pod)?, GPUS, SkipReason::NoGpu)?;
        let duration_s = run_time(&pod)?;
        Ok(RawJob::whole_gpus(name, submit_s, duration_s, gpus))
    }

    /// `Succeeded` pods are kept; `Failed` ones only with `all_states`; pods not ended
    /// (`Pending`, `Running`, `Unknown`) are `no_end_time`.
    fn check_phase(&self, pod: &Pod) -> Result<(), Skip> {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        let phase = required(phase, PHASE)?;
        match phase {
            "Succeeded" => Ok(()),
            "Pending" | "Running" | "Unknown" => Err(Skip::new(
                SkipReason::NoEndTime,
                PHASE,
                format!("is `{phase}`: the pod has not ended"),
            )),
            _ if self.all_states => Ok(()),
            _ => Err(Skip::new(
                SkipReason::NotCompleted,
                PHASE,
                format!("is `{phase}`, not Succeeded (keep it with `all_states`)"),
            )),
        }
    }
}

/// The line's pod, or an `unparsable` skip that says what a line must hold.
fn read_pod(row: &Row<'_>) -> Result<Pod, Skip> {
    if row.record.len() != 1 {
        return Err(unparsable(POD, "", "one JSON object per line"));
    }
    let text = row.text(POD)?;
    serde_json::from_str(text).map_err(|err| {
        Skip::new(
            SkipReason::Unparsable,
            POD,
            format!(
                "is not a pod object ({err}); write one pod per line, e.g. \
                 `kubectl get pods -A -o json | jq -c '.items[]'`"
            ),
        )
    })
}

fn required(value: Option<&str>, col: Col) -> Result<&str, Skip> {
    value
        .filter(|text| !text.trim().is_empty())
        .ok_or_else(|| Skip::new(SkipReason::MissingField, col, "is missing".into()))
}

fn time(text: &str, col: Col) -> Result<f64, Skip> {
    parse_rfc3339(text).ok_or_else(|| unparsable(col, text, "an RFC 3339 time"))
}

/// The pod's GPUs as the scheduler counts them: the sum over its containers, or the largest
/// init container's if that is more. A container's count is its request, or else its limit (an
/// extended resource's request defaults to its limit).
fn pod_gpus(pod: &Pod) -> Result<i64, Skip> {
    let spec = pod.spec.as_ref();
    let mut sum: i64 = 0;
    for container in spec
        .and_then(|s| s.containers.as_deref())
        .unwrap_or_default()
    {
        sum = sum.saturating_add(container_gpus(container)?);
    }
    let mut init_max: i64 = 0;
    for container in spec
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default()
    {
        init_max = init_max.max(container_gpus(container)?);
    }
    Ok(sum.max(init_max))
}

fn container_gpus(container: &Container) -> Result<i64, Skip> {
    let Some(resources) = &container.resources else {
        return Ok(0);
    };
    let quantity = [&resources.requests, &resources.limits]
        .into_iter()
        .find_map(|map| map.as_ref().and_then(|m| m.get(GPU_RESOURCE)));
    match quantity {
        None => Ok(0),
        Some(serde_json::Value::String(text)) => text
            .trim()
            .parse::<i64>()
            .map_err(|_| unparsable(GPUS, text, "a whole number of GPUs")),
        Some(serde_json::Value::Number(number)) => number
            .as_i64()
            .ok_or_else(|| unparsable(GPUS, &number.to_string(), "a whole number of GPUs")),
        Some(other) => Err(unparsable(
            GPUS,
            &other.to_string(),
            "a whole number of GPUs",
        )),
    }
}

/// From the earliest `startedAt` of the containers that terminated (else the pod's
/// `status.startTime`) to their latest `finishedAt`.
fn run_time(pod: &Pod) -> Result<f64, Skip> {
    let status = pod.status.as_ref();
    let terminated = status
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c.state.as_ref().and_then(|s| s.terminated.as_ref()));
    let mut first_start: Option<f64> = None;
    let mut last_finish: Option<f64> = None;
    for ended in terminated {
        if let Some(text) = ended.started_at.as_deref() {
            let start = time(text, STARTED)?;
            first_start = Some(first_start.map_or(start, |s| s.min(start)));
        }
        if let Some(text) = ended.finished_at.as_deref() {
            let finish = time(text, FINISHED)?;
            last_finish = Some(last_finish.map_or(finish, |f| f.max(finish)));
        }
    }
    let Some(finish) = last_finish else {
        let detail = "is missing: no container has finished".into();
        return Err(Skip::new(SkipReason::NoEndTime, FINISHED, detail));
    };
    let start = match first_start {
        Some(start) => start,
        None => {
            let col = field("status.startTime");
            let text = status.and_then(|s| s.start_time.as_deref());
            time(required(text, col)?, col)?
        }
    };
    if finish < start {
        let detail = format!("is {} s before the start", start - finish);
        return Err(Skip::new(SkipReason::EndBeforeStart, FINISHED, detail));
    }
    positive_duration(finish - start, FINISHED)
}

#[cfg(test)]
mod tests {
    use crate::workload::trace::{ReadOptions, TraceFormat, read_trace_bytes};

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/traces/kubernetes_pods.jsonl");

    fn opts(strict: bool, all_states: bool) -> ReadOptions {
        ReadOptions {
            strict,
            limit: None,
            all_states,
        }
    }

    fn jobs(all_states: bool) -> Vec<(String, f64, f64, u32, u64)> {
        let trace = read_trace_bytes(TraceFormat::Kubernetes, FIXTURE, &opts(false, all_states));
        trace
            .unwrap()
            .jobs
            .iter()
            .map(|j| (j.name.clone(), j.arrival_s, j.duration_s, j.gpus, j.line))
            .collect()
    }

    /// Worked by hand from the fixture. train-a: created 10:00:00Z, ran 10:01:00-11:01:00, 2 GPUs.
    /// train-b: created 11:10:00+01:00 = 10:10:00Z (600 s after train-a), its containers ran
    /// from 10:10:20 (sidecar) to 10:40:35 (sidecar): 1815 s; GPUs 1 (main's limit) + 0, init 1.
    /// big: created 12:00:00Z (7200 s), no startedAt so status.startTime 12:00:30 to 13:00:00:
    /// 3570 s; GPUs max(8, init 16) = 16.
    #[test]
    fn succeeded_pods_by_hand() {
        let expected: Vec<(String, f64, f64, u32, u64)> = [
            ("ml/train-a", 0.0, 3600.0, 2, 1),
            ("ml/train-b", 600.0, 1815.0, 1, 2),
            ("ml/big", 7200.0, 3570.0, 16, 7),
        ]
        .iter()
        .map(|&(n, a, d, g, l)| (n.to_owned(), a, d, g, l))
        .collect();
        assert_eq!(jobs(false), expected);
        let trace = read_trace_bytes(TraceFormat::Kubernetes, FIXTURE, &opts(false, false));
        let trace = trace.unwrap();
        assert_eq!(trace.rows_read, 9);
        assert_eq!(
            trace.skips.to_string(),
            "6 rows skipped: 1 missing_field, 1 unparsable, 1 end_before_start, \
             1 no_end_time, 1 no_gpu, 1 not_completed"
        );
    }

    /// The Failed pod (created 10:20:00Z, 1200 s; ran 10:21:00.5-10:31:00.5, 4 GPUs) is kept
    /// with every state.
    #[test]
    fn all_states_keeps_failed_pods() {
        let got = jobs(true);
        assert_eq!(got.len(), 4);
        assert_eq!(got[2], ("ml/crash".to_owned(), 1200.0, 600.0, 4, 3));
    }

    #[test]
    fn strict_mode_names_the_first_defect() {
        let err = read_trace_bytes(TraceFormat::Kubernetes, FIXTURE, &opts(true, false))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("<bytes>:6: field `pod` is not a pod object (expected ident"),
            "{err}"
        );
        assert!(err.contains("jq -c '.items[]'"), "{err}");
    }
}
