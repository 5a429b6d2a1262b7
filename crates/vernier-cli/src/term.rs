//! Terminal concerns: colour decisions, the progress line, Ctrl-C.

use std::io::Write;
use vernier::measure::Progress;
use vernier::report::Style;

/// Colour on a terminal unless `NO_COLOR` is set (<https://no-color.org>).
pub fn style() -> Style {
    Style::for_stdout()
}

/// The style of the output: colour and the progress line (hyperfine's `--style`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputStyle {
    /// Colour on a terminal unless NO_COLOR is set; the progress line on a terminal
    #[default]
    Auto,
    /// No colour, no progress line
    Basic,
    /// Colour, even off a terminal or under NO_COLOR; the progress line on a terminal
    Full,
    /// No colour; the progress line on a terminal
    Nocolor,
    /// Colour, even off a terminal or under NO_COLOR; no progress line
    Color,
    /// Nothing on standard output, no progress line
    #[value(name = "none")]
    Silent,
}

impl OutputStyle {
    /// The colour of standard output: `auto` decides as [`style`] does; the others say it.
    pub fn style(self) -> Style {
        match self {
            OutputStyle::Auto => style(),
            OutputStyle::Full | OutputStyle::Color => Style { color: true },
            OutputStyle::Basic | OutputStyle::Nocolor | OutputStyle::Silent => {
                Style { color: false }
            }
        }
    }

    /// Whether the progress line may be shown (it still needs a terminal on standard error).
    pub fn progress(self) -> bool {
        matches!(
            self,
            OutputStyle::Auto | OutputStyle::Full | OutputStyle::Nocolor
        )
    }

    /// Whether nothing of the measurement is printed on standard output (`none`).
    pub fn silent(self) -> bool {
        self == OutputStyle::Silent
    }
}

/// A one-line progress indicator on stderr, shown only when stderr is a terminal: benchmark
/// k of n, its name, its budget spent, samples and interval so far, and the run's elapsed
/// time; rewritten in place (`\r`), cut to the terminal's width so it never wraps, and cleared
/// before each row of the table is printed and at the end.
pub struct ProgressLine {
    enabled: bool,
    shown: bool,
    /// Benchmarks in the run (0: unknown), the current one's position and name.
    total: usize,
    index: usize,
    current: String,
    started: std::time::Instant,
}

impl ProgressLine {
    pub fn new() -> ProgressLine {
        ProgressLine {
            enabled: vernier::report::is_terminal(2),
            shown: false,
            total: 0,
            index: 0,
            current: String::new(),
            started: std::time::Instant::now(),
        }
    }

    /// The same line, never shown unless `shown` (`--style basic`, …).
    pub fn shown(mut self, shown: bool) -> ProgressLine {
        self.enabled &= shown;
        self
    }

    /// The same line, told how many benchmarks the run has (shown as "k/n").
    pub fn of(mut self, total: usize) -> ProgressLine {
        self.total = total;
        self
    }

    pub fn update(&mut self, name: &str, p: &Progress) {
        if name != self.current {
            self.current = name.to_string();
            self.index += 1;
        }
        if !self.enabled {
            return;
        }
        let frac = (p.elapsed_ns as f64 / p.budget_ns.max(1) as f64).min(1.0);
        let width = 20;
        let filled = (frac * width as f64) as usize;
        let ci = p
            .rel_ci
            .map(|c| format!("±{:.2}%", c * 100.0))
            .unwrap_or_else(|| "warming up".into());
        let k = if self.total > 0 {
            format!("{}/{} ", self.index.min(self.total), self.total)
        } else {
            String::new()
        };
        self.show(&format!(
            "{k}{} [{}{}] {} samples {ci} · {:.1} s",
            vernier::report::cut_middle(name, 32),
            "#".repeat(filled),
            " ".repeat(width - filled),
            p.samples,
            self.started.elapsed().as_secs_f64()
        ));
    }

    /// A line of text in place of the bar (a step that is not sampling).
    pub fn status(&mut self, text: &str) {
        if self.enabled {
            self.show(text);
        }
    }

    /// The next of the run's steps that are not sampling, in place of the bar:
    /// `TEXT (k of n, t s so far)`.
    pub fn step(&mut self, text: &str) {
        self.index += 1;
        if self.enabled {
            let of = if self.total > 0 {
                format!("{} of {}, ", self.index.min(self.total), self.total)
            } else {
                String::new()
            };
            let secs = self.started.elapsed().as_secs_f64();
            self.show(&format!("{text} ({of}{secs:.0} s so far)"));
        }
    }

    /// `line`, indented, in place of what was shown, cut to the terminal's width (in display
    /// columns) so that it never wraps.
    fn show(&mut self, line: &str) {
        let cols = vernier::report::terminal_width(2)
            .unwrap_or(80)
            .saturating_sub(3)
            .max(20);
        let line = vernier::report::cut_end(line, cols);
        eprint!("\r\x1b[2K  {line}");
        let _ = std::io::stderr().flush();
        self.shown = true;
    }

    pub fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.shown = false;
        }
    }
}

pub use vernier::measure::ctrlc::{install_ctrlc, install_stop_handler, interrupted};

/// Say a note about the run's tools or harness on standard error (`vernier: NOTE`) once per
/// run: the same note from every benchmark that meets the condition is said the first time
/// only. Returns whether it was said now.
pub fn note_once(note: &str) -> bool {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.iter().any(|s| s == note) {
        return false;
    }
    said.push(note.to_string());
    eprintln!("vernier: {note}");
    true
}

/// `; result written to FILE`, or nothing without `--json`: the end of a run's closing line.
pub fn written_to(json: Option<&std::path::Path>) -> String {
    json.map(|p| format!("; result written to {}", p.display()))
        .unwrap_or_default()
}

/// After Ctrl-C: say that every finished benchmark is kept, and give the exit status (130).
pub fn interrupted_exit() -> Option<i32> {
    interrupted().then(|| {
        eprintln!("vernier: interrupted; every benchmark finished before Ctrl-C is kept");
        130
    })
}

/// Ends the process quietly when stdout is a closed pipe (see the body); call once, first.
pub fn install_pipe_hook() {
    // Output piped into a command that stops reading (`vernier analyze r.json | head`) ends
    // the process quietly, as a shell expects of a Unix tool (status 141, as if by SIGPIPE),
    // instead of a panic in println!. SIGPIPE itself stays ignored: a worker that dies must
    // give an error on its pipe, not kill the runner.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info)
    }));
}
