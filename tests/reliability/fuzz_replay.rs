//! The fuzz targets' CI smoke (docs/reliability.md): every entry of `vidprep::fuzzing` (the
//! ones `fuzz/fuzz_targets/` wrap) is run on its seeds (the fixtures, `Target::seeds`), on
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` when present, and on a fixed number
//! of seeded random mutations of them, with no instrumented build. Each input must give an
//! answer (a result, or an error naming its file) without a panic, within a time bound.
//!
//! `cargo test --test integration reliability::fuzz_replay::write_corpus -- --ignored` writes the seeds to
//! `fuzz/corpus/<target>/` (ignored by git) for `cargo fuzz run`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vidprep::fuzzing::{run, Scratch, Target};

/// Mutations per target (each of a random seed); the whole replay takes a few seconds.
/// `VIDPREP_FUZZ_MUTATIONS=N` and `VIDPREP_FUZZ_SEED=S` make a longer run with other mutants
/// (an uninstrumented fuzzing run, docs/reliability.md).
const MUTATIONS: usize = 400;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
/// The longest one input may take (a hang or runaway work otherwise).
const PER_INPUT: Duration = Duration::from_secs(5);

fn root() -> PathBuf {
    crate::repo_root().to_path_buf()
}

/// The seeds of `target`: the fixtures' and any kept in `fuzz/corpus` and `fuzz/regressions`.
fn seeds(target: Target) -> Vec<Vec<u8>> {
    let mut seeds = target.seeds(&root());
    for kind in ["corpus", "regressions"] {
        let dir = root().join("fuzz").join(kind).join(target.name());
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            seeds.extend(paths.iter().filter_map(|p| std::fs::read(p).ok()));
        }
    }
    seeds
}

/// A small seeded generator (SplitMix64): the same seed gives the same mutants everywhere.
struct TestRng(u64);

impl TestRng {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 32) as u32
    }
}

/// Tokens the parsers give meaning to, and values at the edges of their numbers.
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "18446744073709551616",
    "9223372036854775807",
    "2147483648",
    "0.0000000000000000001",
    "99999999999999999999.99999999999",
    ",",
    "\n",
    "\r\n",
    ":",
    "=",
    "%",
    "s",
    "/",
    "\"",
    "[",
    "]",
    "{",
    "}",
    "null",
    "\u{feff}",
    "#",
    ";",
    "\0",
    "\u{ffff}",
    "00:00:00.000",
    "-->",
    "WEBVTT",
    "1/0",
    "0/0",
    "%d",
    "%99999d",
    "9999999999",
];

/// One mutation of `data` (another seed from `pool` to splice from).
fn mutate(rng: &mut TestRng, data: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut out = data.to_vec();
    let rounds = 1 + rng.next_u32() % 4;
    for _ in 0..rounds {
        let len = out.len();
        let at = if len == 0 {
            0
        } else {
            rng.next_u32() as usize % (len + 1)
        };
        let span = 1 + rng.next_u32() as usize % 16;
        match rng.next_u32() % 7 {
            0 if len > 0 => {
                let i = at.min(len - 1);
                out[i] ^= 1 << (rng.next_u32() % 8);
            }
            1 => out.insert(at, rng.next_u32() as u8),
            2 => {
                let end = (at + span).min(len);
                out.drain(at..end);
            }
            3 => {
                let end = (at + span).min(len);
                let piece = out[at..end].to_vec();
                let times = 1 + rng.next_u32() as usize % 8;
                for _ in 0..times {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            4 | 5 => {
                let token = TOKENS[rng.next_u32() as usize % TOKENS.len()];
                out.splice(at..at, token.bytes());
            }
            _ => {
                let other = &pool[rng.next_u32() as usize % pool.len()];
                if !other.is_empty() {
                    let from = rng.next_u32() as usize % other.len();
                    let end = (from + span * 4).min(other.len());
                    out.splice(at..at, other[from..end].iter().copied());
                }
            }
        }
    }
    out
}

/// Runs `data` through `target`; the finding, if any.
fn finding(target: Target, data: &[u8], scratch: &Scratch) -> Option<String> {
    let start = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| run(target, data, scratch)));
    let took = start.elapsed();
    let what = match outcome {
        Ok(Ok(())) if took <= PER_INPUT => return None,
        Ok(Ok(())) => format!("took {took:?}"),
        Ok(Err(broke)) => broke,
        Err(panic) => format!(
            "panicked: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        ),
    };
    Some(format!(
        "{}: {what}\n  input: b\"{}\"",
        target.name(),
        data.escape_ascii()
    ))
}

#[test]
fn every_parser_answers_its_corpus_and_mutations() {
    let scratch = Scratch::new().unwrap();
    let mut findings = Vec::new();
    let started = Instant::now();
    let mut inputs = 0;
    let mutations = env_number("VIDPREP_FUZZ_MUTATIONS", MUTATIONS as u64) as usize;
    let seed = env_number("VIDPREP_FUZZ_SEED", 0);
    for (n, &target) in Target::ALL.iter().enumerate() {
        let pool = seeds(target);
        assert!(
            pool.iter().any(|s| !s.is_empty()),
            "{}: no seeds (fixtures moved?)",
            target.name()
        );
        let mut rng = TestRng(seed.wrapping_mul(1000) + n as u64 + 1);
        let mutants: Vec<Vec<u8>> = (0..mutations)
            .map(|_| {
                let seed = &pool[rng.next_u32() as usize % pool.len()];
                mutate(&mut rng, seed, &pool)
            })
            .collect();
        let start = Instant::now();
        for data in pool.iter().chain(&mutants) {
            inputs += 1;
            findings.extend(finding(target, data, &scratch));
        }
        eprintln!(
            "{}: {} inputs in {:?}",
            target.name(),
            pool.len() + mutants.len(),
            start.elapsed()
        );
    }
    eprintln!("{inputs} inputs in {:?}", started.elapsed());
    assert!(
        findings.is_empty(),
        "{} finding(s):\n{}",
        findings.len(),
        findings.join("\n")
    );
}

#[test]
fn every_fuzz_target_has_its_wrapper() {
    for target in Target::ALL {
        let path = root()
            .join("fuzz/fuzz_targets")
            .join(format!("{}.rs", target.name()));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            text.contains(&format!("{target:?}")),
            "{}: no fuzz target wrapping Target::{target:?}",
            path.display()
        );
    }
}

/// Writes the seeds to `fuzz/corpus/<target>/seed-<n>` for `cargo fuzz run`.
#[test]
#[ignore]
fn write_corpus() {
    for &target in Target::ALL {
        let dir = root().join("fuzz/corpus").join(target.name());
        std::fs::create_dir_all(&dir).unwrap();
        for (i, seed) in target.seeds(&root()).iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("seed-{i}")), seed).unwrap();
        }
    }
}
