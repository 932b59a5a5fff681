//! A progress line for long steps: a spinner on stderr with what is being done and the time
//! taken, drawn only once the step has run for [`SHOW_AFTER`] and only when stderr is a terminal
//! (indicatif draws nothing otherwise), so piped outputs and the tests see nothing of it.
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a step runs before its progress line appears.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A spinner for one long command, cleared when dropped.
pub struct Progress {
    bar: ProgressBar,
    /// Set when the command is done; guards the switch to a visible draw target.
    done: Arc<Mutex<bool>>,
}

impl Progress {
    /// A spinner showing `message`, hidden for the first [`SHOW_AFTER`].
    ///
    /// # Errors
    /// Only if the progress template is malformed.
    pub fn new(message: impl Into<String>) -> anyhow::Result<Self> {
        Self::drawn_on(message, ProgressDrawTarget::stderr)
    }

    /// As [`Progress::new`], drawn on the target `target` makes once [`SHOW_AFTER`] has passed.
    fn drawn_on(
        message: impl Into<String>,
        target: impl FnOnce() -> ProgressDrawTarget + Send + 'static,
    ) -> anyhow::Result<Self> {
        let style = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .context("progress bar template")?;
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
            .with_style(style)
            .with_message(message.into());
        let done = Arc::new(Mutex::new(false));
        let (late_bar, late_done) = (bar.clone(), done.clone());
        thread::spawn(move || {
            let started = Instant::now();
            while started.elapsed() < SHOW_AFTER {
                if late_done.lock().map_or(true, |d| *d) {
                    return;
                }
                thread::sleep(Duration::from_millis(50));
            }
            if let Ok(done) = late_done.lock()
                && !*done
            {
                late_bar.set_draw_target(target());
                late_bar.enable_steady_tick(Duration::from_millis(120));
            }
        });
        Ok(Self { bar, done })
    }

    /// Replaces what the line says is being done.
    pub fn set_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// Prints `line` on stderr above the progress line.
    pub fn note(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let guard = self.done.lock();
        if let Ok(mut done) = guard {
            *done = true;
        }
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use indicatif::TermLike;

    use super::*;

    /// A terminal that keeps what is written to it.
    #[derive(Clone, Debug, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl Screen {
        fn text(&self) -> String {
            self.0.lock().unwrap().clone()
        }
    }

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, line: &str) -> io::Result<()> {
            self.write_str(&format!("{line}\n"))
        }
        fn write_str(&self, text: &str) -> io::Result<()> {
            self.0.lock().unwrap().push_str(text);
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    fn on(screen: &Screen, message: &str) -> Progress {
        let term = screen.clone();
        Progress::drawn_on(message, move || {
            ProgressDrawTarget::term_like(Box::new(term))
        })
        .unwrap()
    }

    #[test]
    fn a_long_step_shows_its_message_after_a_second_and_a_short_one_never() {
        let screen = Screen::default();
        let short = on(&screen, "short step");
        thread::sleep(Duration::from_millis(200));
        drop(short);
        let long = on(&screen, "long step");
        thread::sleep(Duration::from_millis(300));
        long.set_message("long step, later");
        assert_eq!(screen.text(), "", "nothing within the first second");
        thread::sleep(SHOW_AFTER + Duration::from_millis(500));
        drop(long);
        let text = screen.text();
        assert!(text.contains("long step, later"), "{text:?}");
        assert!(!text.contains("short step"), "{text:?}");
    }
}
