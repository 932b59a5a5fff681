//! The `colo` command line: argument parsing and one thin function per subcommand.
// Doc comments in this crate are clap's help text (`OUT/<plan>.jsonl`, `[default: ...]`), not
// rustdoc markup.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]
mod cmd;
// mimalloc rather than the system allocator: see the workspace Cargo.toml.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc v3's `mi_option_purge_delay` (its place in `mi_option_e`, mimalloc.h; the
/// bindings do not name it; a test checks the library is v3).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps the memory the process frees for its own next allocations instead of returning it
/// to the OS after a delay: a replay frees and makes buffers all along (rows held until the
/// jobs before them are written, batches handed between threads), and every page returned
/// and taken again is a fault (a zeroed 2 MiB page under transparent huge pages). synthgen_1m:
/// 1.23 -> 1.0 s (median of 6), peak RSS unchanged (151 vs 156 MiB).
#[allow(unsafe_code)] // one FFI call: mimalloc's bindings have no safe option setter.
fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's global options (an atomic store), before any thread is
    // started; -1 is its documented "no purging".
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Simulate and calibrate deep-learning training jobs that share GPUs
/// (time-slicing, MPS, MIG).
#[derive(Parser)]
#[command(
    name = "colo",
    version,
    about,
    help_expected = true,
    after_help = "Examples:\n  colo simulate scenarios/default.ron              (400 jobs on 8 H200s, four ways)\n  colo predict --mode mps resnet50:64:224 vit_b_16:32:224\n  colo pack resnet50:64:224@0.5 vit_b_16:32:224@0.4 resnet18:128:32@0.8\n  colo plan scenarios/planning/mps-vs-exclusive.ron --target \"p95_wait <= 2h\"\n  colo predict --gpu a100-40gb --traces calibrate/data/h200/byo/traces --mode mps hf_gpt2:8:1 bert_mlm:32:1\n  colo <COMMAND> --help                            (each command's options and examples)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (all its sweep variants in parallel) and write results.
    #[command(
        after_help = "Examples:\n  colo simulate scenarios/default.ron\n  colo simulate scenarios/planning/mps-vs-exclusive.ron --out /tmp/r\n  colo simulate scenarios/bench/synthgen_10m.ron --jobs 100000 --outputs summary\n  colo simulate SWEEP.ron --shard 0/4 --out /tmp/s0   (then `colo merge`)\n  colo simulate scenarios/default.ron --out /tmp/r --format json"
    )]
    Simulate(cmd::simulate::SimulateArgs),
    /// Join the result folders of a sweep's shards (`simulate --shard K/N`) into one.
    #[command(
        after_help = "Example:\n  for k in 0 1 2 3; do colo simulate SWEEP.ron --shard $k/4 --out /tmp/s$k; done\n  colo merge --out results/SWEEP /tmp/s0 /tmp/s1 /tmp/s2 /tmp/s3\nThe merged folder equals the unsharded run's. A Slurm template: docs/slurm/colo-sweep.sbatch."
    )]
    Merge(cmd::merge::MergeArgs),
    /// Predict per-job throughput and memory fit of jobs sharing one GPU.
    #[command(
        after_help = "Examples:\n  colo predict --mode mps resnet50:64:224 vit_b_16:32:224\n  colo predict --mode mps --sm-pct 45,55 resnet50:64:224 lm_medium:16:512 --format json\n  colo predict --mode mig --layout 3g.71gb,4g.71gb resnet50:64:224 vit_b_16:32:224\n  colo predict --traces traces/ my_llm:16:1 resnet50:64:224   (your own traced job)\n\nExit status: 0 when the set fits in memory (speeds printed); 3 when it does \
                      not fit (the out-of-memory verdict, no speeds; null speeds in JSON); 2 when the \
                      command line does not parse (an unknown option, a value of the wrong \
                      form); 1 on any other error (a point or file colo cannot use, options \
                      that do not go together)."
    )]
    Predict(cmd::predict::PredictArgs),
    /// Search the best packings of jobs on GPUs of one type (time-slicing, MPS, MIG).
    #[command(
        after_help = "Examples:\n  colo pack resnet50:64:224@0.5 vit_b_16:32:224@0.4 resnet18:128:32@0.8\n  colo pack --gpus 1 --format json resnet18:128:32 resnet18:128:32 resnet26:128:32\n  colo pack --traces traces/ my_llm:16:1 resnet50:64:224   (your own traced job)\n  colo pack --model parametric resnet50:64:224 vit_b_16:32:224"
    )]
    Pack(cmd::pack::PackArgs),
    /// Find the smallest (and cheapest) cluster per candidate that meets a target on a scenario.
    #[command(after_help = cmd::plan::after_help())]
    Plan(cmd::plan::PlanArgs),
    /// List GPU types, their MIG profiles and valid MIG layouts.
    #[command(
        after_help = "Examples:\n  colo hardware\n  colo hardware --gpu h200\n  colo hardware --gpu a100-40gb --format json"
    )]
    Hardware(cmd::hardware::HardwareArgs),
    /// Measure real training on a GPU and fit profiles.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// Draw figures from result folders.
    #[command(
        after_help = "Examples:\n  colo plot results/default --out figures              (every variant of a sweep)\n  colo plot results/default/mps results/default/mig --out figures --format svg"
    )]
    Plot(cmd::plot::PlotArgs),
    /// Write generated reports: `colo report paper` reproduces the collocation study.
    Report(cmd::report::ReportArgs),
    /// Time the engine (build with --release): synthetic, trace, sweep, kernel-model, anchor
    /// (the PAI simulator's inputs) and scaling cases.
    #[command(
        after_help = "Examples:\n  colo bench --case anchors          the PAI-2020 simulator's inputs beside its recorded times\n  colo bench --case scale --scale-to 10000000\n  colo bench --case kernel --format csv"
    )]
    Bench(cmd::bench::BenchArgs),
}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Merge(args) => cmd::merge::run(args),
        Command::Predict(args) => cmd::predict::run(args),
        Command::Pack(args) => cmd::pack::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Hardware(args) => cmd::hardware::run(args),
        Command::Calibrate(args) => cmd::calibrate::run(args),
        Command::Plot(args) => cmd::plot::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Bench(args) => cmd::bench::run(args),
    };
    match res {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {}", error_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by ": " (as `{:#}` does), each sentence once: the library
/// errors write their source into their own message (`cannot read x: {source}`) and also
/// return it as their source, so a cause the text already holds is not written again.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// A closed pipe (`colo ... | head`) is not an error worth reporting.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option set is mimalloc v3's purge delay: the library is v3, and the option at that
    /// place starts at v3's default purge delay, 1000 ms (unless the environment sets it).
    #[test]
    #[allow(unsafe_code)]
    fn the_option_kept_is_v3s_purge_delay() {
        // SAFETY: reads of mimalloc's version and options.
        let (version, before) = unsafe {
            (
                libmimalloc_sys::mi_version(),
                libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY),
            )
        };
        assert_eq!(version / 10_000, 3, "mimalloc {version}");
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(before, 1000);
        }
        keep_freed_memory();
        // SAFETY: as above.
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) },
            -1
        );
    }

    /// As the library's thiserror types are: the source in the message and as the source.
    #[derive(Debug)]
    struct ReadError {
        source: std::io::Error,
    }

    impl std::fmt::Display for ReadError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot read x.ron: {}", self.source)
        }
    }

    impl std::error::Error for ReadError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn error_text_writes_a_source_the_message_already_holds_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let err = anyhow::Error::new(ReadError { source: io }).context("simulate");
        assert_eq!(
            format!("{err:#}"),
            "simulate: cannot read x.ron: No such file (os error 2): No such file (os error 2)",
            "anyhow's chain alone repeats it"
        );
        assert_eq!(
            error_text(&err),
            "simulate: cannot read x.ron: No such file (os error 2)"
        );
        let plain = anyhow::anyhow!("bad value").context("--layout");
        assert_eq!(error_text(&plain), "--layout: bad value");
    }
}
