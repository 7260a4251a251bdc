//! Subtitles beside sampled frames: an SRT or WebVTT file read as pysubs2 1.8 reads it
//! (`pysubs2.load(path, encoding="utf-8")`: `formats/subrip.py` and `formats/webvtt.py`), and
//! each frame's text picked by VLMEvalKit's Video-MME rule (`vlmeval/dataset/videomme.py`,
//! `build_prompt`): the first cue, in file order, with `start < t < end` (milliseconds, both
//! strict), its `\N` replaced by a space; the prompt joins the frames' non-blank texts with
//! newlines. pysubs2 ignores lines it cannot read; here a timing line that does not read
//! (a line with `-->` without two timestamps, or a cue that ends before it starts) is an error
//! naming the file and line, so a damaged file is never silently half-used.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

/// The subtitle formats pysubs2 parses with its SubRip reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SubtitleFormat {
    Srt,
    Vtt,
}

/// One cue: its span in milliseconds and its text in pysubs2's form (line breaks as `\N`,
/// `<i>` as `{\i1}`, other HTML tags removed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cue {
    pub start_ms: i64,
    pub end_ms: i64,
    pub text: String,
}

/// A subtitle file, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Subtitles {
    pub path: PathBuf,
    pub format: SubtitleFormat,
    pub cues: Vec<Cue>,
}

/// The rule, as recorded in `frames.json`.
pub const RULE: &str = "VLMEvalKit vlmeval/dataset/videomme.py build_prompt: the first cue \
    (file order, pysubs2 1.8 parsing) with start < t < end, t = the frame's time in whole \
    milliseconds (Python's round), '\\N' replaced by ' '; the prompt text joins the non-blank \
    texts with '\\n'";

impl Subtitles {
    /// Reads `path` (UTF-8; WebVTT when it starts with `WEBVTT`, else SubRip).
    pub fn load(path: &Path) -> Result<Subtitles> {
        let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            line: None,
            message: format!(
                "is not UTF-8 text ({e}); convert it (iconv -t UTF-8) and give it again"
            ),
        })?;
        Subtitles::parse(path, &text)
    }

    /// Parses subtitle `text` (from `path`, for errors).
    pub fn parse(path: &Path, text: &str) -> Result<Subtitles> {
        // Python's text mode: universal newlines.
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let format = if text.trim_start().starts_with("WEBVTT") {
            SubtitleFormat::Vtt
        } else {
            SubtitleFormat::Srt
        };
        let bad = |line: usize, message: String| Error::BadFile {
            path: path.to_path_buf(),
            line: Some(line),
            message,
        };
        let mut cues: Vec<(i64, i64, Vec<&str>)> = Vec::new();
        for (n, line) in text.split_inclusive('\n').enumerate() {
            let stamps = match format {
                SubtitleFormat::Srt => find_srt_stamps(line),
                SubtitleFormat::Vtt => find_vtt_stamps(line),
            };
            if stamps.len() == 2 {
                let (start, end) = (stamps[0], stamps[1]);
                if end < start {
                    return Err(bad(
                        n + 1,
                        format!(
                            "this cue ends ({end} ms) before it starts ({start} ms); fix its \
                             timing line"
                        ),
                    ));
                }
                cues.push((start, end, Vec::new()));
            } else if line.contains("-->") {
                let expected = match format {
                    SubtitleFormat::Srt => "HH:MM:SS,mmm --> HH:MM:SS,mmm",
                    SubtitleFormat::Vtt => "[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm",
                };
                return Err(bad(
                    n + 1,
                    format!(
                        "cannot read the cue timing {:?}; expected {expected}",
                        line.trim_end()
                    ),
                ));
            } else if let Some(last) = cues.last_mut() {
                last.2.push(line);
            }
        }
        // Text but not one cue: most likely a timing line in a form neither reader knows (a
        // single-dash arrow, frame numbers); an export without its subtitles would pass silently.
        if cues.is_empty() && !text.trim().is_empty() {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                line: None,
                message: format!(
                    "holds no subtitle cue: no line reads as a timing line ({}); fix the \
                     file or drop --subtitles",
                    match format {
                        SubtitleFormat::Srt => "HH:MM:SS,mmm --> HH:MM:SS,mmm",
                        SubtitleFormat::Vtt => "[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm",
                    }
                ),
            });
        }
        Ok(Subtitles {
            path: path.to_path_buf(),
            format,
            cues: cues
                .into_iter()
                .map(|(start_ms, end_ms, lines)| Cue {
                    start_ms,
                    end_ms,
                    text: prepare_text(&lines),
                })
                .collect(),
        })
    }

    /// The text shown at `t_ms` by VLMEvalKit's rule ("" when no cue covers it).
    pub fn text_at(&self, t_ms: i64) -> String {
        self.cues
            .iter()
            .find(|c| c.start_ms < t_ms && c.end_ms > t_ms)
            .map(|c| c.text.replace("\\N", " "))
            .unwrap_or_default()
    }

    /// The prompt text of frames whose texts are `texts`: the non-blank ones joined by
    /// newlines (VLMEvalKit's `'\n'.join(subtitles)`).
    pub fn prompt(texts: &[String]) -> String {
        texts
            .iter()
            .filter(|t| !t.trim().is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A frame's time as VLMEvalKit gives pysubs2: whole milliseconds, `round` of Python (half to
/// even).
pub fn time_ms(seconds: f64) -> i64 {
    (seconds * 1000.0).round_ties_even() as i64
}

/// pysubs2's SubRip `prepare_text`, without its options (tags converted, others dropped).
fn prepare_text(lines: &[&str]) -> String {
    let blank = |l: &str| l.chars().all(char::is_whitespace);
    let number = |l: &str| {
        let t = l.trim();
        !t.is_empty() && t.chars().all(|c| c.is_ascii_digit())
    };
    if lines.len() >= 2
        && lines[..lines.len() - 1].iter().all(|l| blank(l))
        && number(lines[lines.len() - 1])
    {
        return String::new();
    }
    let joined: String = lines.concat();
    let mut s = joined.trim().to_string();
    // re.sub(r"\n+ *\d+ *$", "", s): the next cue's number.
    s = strip_trailing_number(&s);
    for tag in ["i", "s", "u", "b"] {
        s = replace_tag(&s, tag, false, &format!("{{\\{tag}1}}"));
        s = replace_tag(&s, tag, true, &format!("{{\\{tag}0}}"));
    }
    s = strip_html(&s);
    s.replace('\n', "\\N")
}

/// `re.sub(r"\n+ *\d+ *$", "", s)`.
fn strip_trailing_number(s: &str) -> String {
    let b = s.as_bytes();
    let mut i = b.len();
    while i > 0 && b[i - 1] == b' ' {
        i -= 1;
    }
    let digits_end = i;
    while i > 0 && b[i - 1].is_ascii_digit() {
        i -= 1;
    }
    if i == digits_end {
        return s.to_string();
    }
    while i > 0 && b[i - 1] == b' ' {
        i -= 1;
    }
    if i == 0 || b[i - 1] != b'\n' {
        return s.to_string();
    }
    while i > 0 && b[i - 1] == b'\n' {
        i -= 1;
    }
    s[..i].to_string()
}

/// `re.sub(r"< *i *>", ...)` (or `< */ *i *>` when `closing`) for tag `tag`.
fn replace_tag(s: &str, tag: &str, closing: bool, with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let mut t = after.trim_start_matches(' ');
        let mut ok = true;
        if closing {
            if let Some(x) = t.strip_prefix('/') {
                t = x.trim_start_matches(' ');
            } else {
                ok = false;
            }
        }
        let matched = t
            .strip_prefix(tag)
            .map(|x| x.trim_start_matches(' '))
            .and_then(|x| x.strip_prefix('>'))
            .filter(|_| ok);
        match matched {
            Some(x) => {
                out.push_str(with);
                rest = x;
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `re.sub(r"< */? *[a-zA-Z][^>]*>", "", s)`.
fn strip_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let mut t = after.trim_start_matches(' ');
        if let Some(x) = t.strip_prefix('/') {
            t = x.trim_start_matches(' ');
        }
        let tag = t.starts_with(|c: char| c.is_ascii_alphabetic());
        match (tag, t.find('>')) {
            (true, Some(end)) => rest = &t[end + 1..],
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Digits at `b[i..]`: between `min` and `max` of them, greedily; every length that would do,
/// longest first (a regex's backtracking choices).
fn digit_runs(b: &[u8], i: usize, min: usize, max: usize) -> impl Iterator<Item = usize> {
    let mut n = 0;
    while n < max && i + n < b.len() && b[i + n].is_ascii_digit() {
        n += 1;
    }
    (min..=n).rev().filter(move |_| n >= min)
}

fn number(b: &[u8]) -> i64 {
    b.iter().fold(0i64, |a, &d| a * 10 + (d - b'0') as i64)
}

/// `findall` of pysubs2's `TIMESTAMP` on `line`: `(\d{1,2}):(\d{1,2}):(\d{1,2})[.,](\d{1,3})`,
/// each as milliseconds (the fraction scaled by its digit count).
fn find_srt_stamps(line: &str) -> Vec<i64> {
    let b = line.as_bytes();
    let try_at = |p: usize| -> Option<(usize, i64)> {
        for h in digit_runs(b, p, 1, 2) {
            let q = p + h;
            if b.get(q) != Some(&b':') {
                continue;
            }
            for m in digit_runs(b, q + 1, 1, 2) {
                let r = q + 1 + m;
                if b.get(r) != Some(&b':') {
                    continue;
                }
                for s in digit_runs(b, r + 1, 1, 2) {
                    let t = r + 1 + s;
                    if !matches!(b.get(t), Some(b'.') | Some(b',')) {
                        continue;
                    }
                    if let Some(f) = digit_runs(b, t + 1, 1, 3).next() {
                        let frac = number(&b[t + 1..t + 1 + f]) * 10i64.pow(3 - f as u32);
                        let ms = number(&b[p..q]) * 3_600_000
                            + number(&b[q + 1..r]) * 60_000
                            + number(&b[r + 1..t]) * 1000
                            + frac;
                        return Some((t + 1 + f, ms));
                    }
                }
            }
        }
        None
    };
    find_all(b, try_at)
}

/// `findall` of pysubs2's WebVTT `TIMESTAMP`: `(\d{0,4}:)?(\d{2}):(\d{2})\.(\d{2,3})`, as
/// `make_time(h, m, s, ms=int(fraction))` (a two-digit fraction counts as milliseconds, as
/// pysubs2 has it).
fn find_vtt_stamps(line: &str) -> Vec<i64> {
    let b = line.as_bytes();
    let rest = |p: usize| -> Option<(usize, i64)> {
        let two = |i: usize| {
            (i + 2 <= b.len() && b[i..i + 2].iter().all(u8::is_ascii_digit)).then_some(())
        };
        two(p)?;
        (b.get(p + 2) == Some(&b':')).then_some(())?;
        two(p + 3)?;
        (b.get(p + 5) == Some(&b'.')).then_some(())?;
        let f = digit_runs(b, p + 6, 2, 3).next()?;
        let ms = number(&b[p..p + 2]) * 60_000
            + number(&b[p + 3..p + 5]) * 1000
            + number(&b[p + 6..p + 6 + f]);
        Some((p + 6 + f, ms))
    };
    let try_at = |p: usize| -> Option<(usize, i64)> {
        // The optional hours group first (greedy), then without it.
        for h in digit_runs(b, p, 0, 4) {
            if b.get(p + h) == Some(&b':') {
                if let Some((end, ms)) = rest(p + h + 1) {
                    return Some((end, ms + number(&b[p..p + h]) * 3_600_000));
                }
            }
        }
        rest(p)
    };
    find_all(b, try_at)
}

fn find_all(b: &[u8], try_at: impl Fn(usize) -> Option<(usize, i64)>) -> Vec<i64> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < b.len() {
        match try_at(p) {
            Some((end, ms)) => {
                out.push(ms);
                p = end.max(p + 1);
            }
            None => p += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Subtitles> {
        Subtitles::parse(Path::new("subs.srt"), text)
    }

    #[test]
    fn srt_cues_read_as_pysubs2_reads_them() {
        let s = parse(
            "1\n00:00:01,000 --> 00:00:02,500\n<i>Hello</i>\nworld\n\n2\n0:0:3.5 --> 00:00:04,25\n<font color=\"red\">Bye</font>  \n\n3\n00:00:05,000 --> 00:00:06,000\n\n4\n",
        )
        .unwrap();
        assert_eq!(s.format, SubtitleFormat::Srt);
        assert_eq!(s.cues.len(), 3);
        assert_eq!((s.cues[0].start_ms, s.cues[0].end_ms), (1000, 2500));
        assert_eq!(s.cues[0].text, "{\\i1}Hello{\\i0}\\Nworld");
        assert_eq!((s.cues[1].start_ms, s.cues[1].end_ms), (3500, 4250));
        assert_eq!(
            s.cues[1].text, "Bye  ",
            "stripped before the tags go, as pysubs2 does"
        );
        assert_eq!(s.cues[2].text, "");
        assert_eq!(s.text_at(1000), "", "start is exclusive");
        assert_eq!(s.text_at(1001), "{\\i1}Hello{\\i0} world");
        assert_eq!(s.text_at(2500), "", "end is exclusive");
    }

    #[test]
    fn vtt_cues_and_prompt() {
        let s = Subtitles::parse(
            Path::new("subs.vtt"),
            "WEBVTT\n\n00:01.000 --> 00:02.000 align:start\nOne\n\ncue-2\n01:00:00.500 --> 01:00:01.000\nTwo\n",
        )
        .unwrap();
        assert_eq!(s.format, SubtitleFormat::Vtt);
        assert_eq!((s.cues[0].start_ms, s.cues[0].end_ms), (1000, 2000));
        // pysubs2 keeps the next cue's identifier line (it strips only a number).
        assert_eq!(s.cues[0].text, "One\\N\\Ncue-2");
        assert_eq!(s.cues[1].start_ms, 3_600_500);
        assert_eq!(
            Subtitles::prompt(&["a".into(), " ".into(), "b".into()]),
            "a\nb"
        );
        assert_eq!(time_ms(0.0005), 0);
        assert_eq!(time_ms(0.0015), 2);
    }

    #[test]
    fn a_broken_cue_names_the_file_and_line() {
        let e = parse("1\n00:00:01,000 --> 00:00:02,500\nok\n\n2\n00:00:03 --> 00:00:04,000\nx\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("subs.srt line 6: cannot read the cue timing"),
            "{e}"
        );
        let e = parse("1\n00:00:05,000 --> 00:00:04,000\nx\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("subs.srt line 2: this cue ends"), "{e}");
    }
}
